#!/usr/bin/env python3
"""gen.py — writes the schema-retrieval benchmark: one large multi-domain
SQLite database (core tables that questions need, plus look-alike filler
tables) and questions.jsonl, each question labelled with the tables its
gold SQL needs and a category. Deterministic for a given --seed and
--filler. Only Python's standard library.

    python3 bench/schema/gen.py --out DIR [--seed 1] [--filler 260]

DIR/schema.sqlite and DIR/questions.jsonl are written (replaced).
Categories (--set tune): value (the question names a value held in a column), synonym
(its words differ from the names), join (needs tables it does not name),
trap (a look-alike table exists), plain.
"""
import argparse
import json
import os
import random
import sqlite3

AUDIT = ["created_at", "created_by", "updated_at", "updated_by", "etl_batch_id",
         "src_sys_cd", "is_deleted", "row_version"]

# Core tables: name -> (domain, [(column, type, fk 'Table.col' or None, values)]).
# values: a list (closed vocabulary, cycled from a seeded offset) or a kind.
C = {}


def t(name, domain, *cols):
    C[name] = (domain, list(cols))


def c(name, typ="TEXT", fk=None, values=None):
    return (name, typ, fk, values)


# sales / CRM: CamelCase
t("Customer", "crm", c("CustomerId", "INTEGER"), c("FirstName", values="first"), c("LastName", values="last"),
  c("Email", values="email"), c("City", values=["Lisbon", "Ghent", "Bergen", "Tallinn", "Utrecht"]),
  c("Country", values=["Portugal", "Belgium", "Norway", "Estonia", "Netherlands"]))
t("CustomerAddress", "crm", c("AddressId", "INTEGER"), c("CustomerId", "INTEGER", "Customer.CustomerId"),
  c("Street", values="street"), c("City", values=["Lisbon", "Ghent", "Bergen"]), c("PostalCode", values="postal"))
t("SalesRep", "crm", c("SalesRepId", "INTEGER"), c("FullName", values="full"),
  c("Region", values=["North", "South", "East", "West"]))
t("Product", "crm", c("ProductId", "INTEGER"), c("ProductName", values=["Trail Bike", "City Helmet", "Winter Gloves", "Bike Lock"]),
  c("Category", values=["Bicycles", "Helmets", "Gloves", "Accessories"]), c("ListPrice", "REAL", values="money"))
t("SalesOrder", "crm", c("OrderId", "INTEGER"), c("CustomerId", "INTEGER", "Customer.CustomerId"),
  c("SalesRepId", "INTEGER", "SalesRep.SalesRepId"), c("OrderDate", values="date"),
  c("Status", values=["Pending", "Shipped", "Delivered", "Cancelled"]), c("TotalAmount", "REAL", values="money"))
t("OrderLine", "crm", c("OrderLineId", "INTEGER"), c("OrderId", "INTEGER", "SalesOrder.OrderId"),
  c("ProductId", "INTEGER", "Product.ProductId"), c("Quantity", "INTEGER", values="small"), c("UnitPrice", "REAL", values="money"))
t("Campaign", "crm", c("CampaignId", "INTEGER"), c("Name", values=["Spring Ride", "Black Friday", "Back to School"]),
  c("Channel", values=["Email", "Radio", "Billboard", "Podcast"]), c("Budget", "REAL", values="money"))
t("CampaignCustomer", "crm", c("CampaignId", "INTEGER", "Campaign.CampaignId"), c("CustomerId", "INTEGER", "Customer.CustomerId"))

# HR: snake_case
t("office_location", "hr", c("location_id", "INTEGER"), c("city", values=["Rotterdam", "Lyon", "Porto", "Krakow", "Aarhus"]),
  c("country", values=["Netherlands", "France", "Portugal", "Poland", "Denmark"]))
t("department", "hr", c("department_id", "INTEGER"), c("department_name", values=["Research", "Payroll", "Legal", "Facilities", "Procurement"]),
  c("location_id", "INTEGER", "office_location.location_id"))
t("employee", "hr", c("employee_id", "INTEGER"), c("first_name", values="first"), c("last_name", values="last"),
  c("hire_date", values="date"), c("department_id", "INTEGER", "department.department_id"),
  c("job_title", values=["Analyst", "Engineer", "Clerk", "Manager", "Recruiter"]), c("salary", "REAL", values="money"),
  c("emp_type", values=["FTE", "CTR", "PTE", "FTE"]))
t("employee_address", "hr", c("address_id", "INTEGER"), c("employee_id", "INTEGER", "employee.employee_id"),
  c("street", values="street"), c("city", values=["Rotterdam", "Lyon", "Porto"]), c("postal_code", values="postal"))
t("leave_request", "hr", c("leave_request_id", "INTEGER"), c("employee_id", "INTEGER", "employee.employee_id"),
  c("leave_type", values=["Annual Leave", "Sick Leave", "Parental Leave", "Unpaid Leave"]), c("start_date", values="date"),
  c("end_date", values="date"), c("approval_status", values=["Approved", "Rejected", "Submitted"]))
t("training_course", "hr", c("training_course_id", "INTEGER"), c("title", values=["First Aid", "GDPR Basics", "Forklift Safety"]),
  c("provider", values=["Udemy", "Red Cross", "In-house"]))
t("employee_training", "hr", c("employee_id", "INTEGER", "employee.employee_id"),
  c("training_course_id", "INTEGER", "training_course.training_course_id"), c("completed_on", values="date"))
t("performance_review", "hr", c("review_id", "INTEGER"), c("employee_id", "INTEGER", "employee.employee_id"),
  c("review_date", values="date"), c("rating", "INTEGER", values="small"))

# inventory: ERP abbreviations, upper case
t("ITEM_MSTR", "inventory", c("ITEM_ID", "INTEGER"), c("ITEM_CD", values="code"),
  c("ITEM_DESC", values=["Hex Bolt M8", "Copper Pipe", "Steel Sheet", "Rubber Seal"]),
  c("UOM_CD", values=["EA", "BOX", "KG", "M"]), c("UNIT_COST_AMT", "REAL", values="money"))
t("WHSE_MSTR", "inventory", c("WHSE_ID", "INTEGER"), c("WHSE_NM", values=["Central DC", "North Depot", "Harbour Store"]),
  c("CITY_NM", values=["Antwerp", "Hamburg", "Gdansk"]))
t("STK_BAL", "inventory", c("ITEM_ID", "INTEGER", "ITEM_MSTR.ITEM_ID"), c("WHSE_ID", "INTEGER", "WHSE_MSTR.WHSE_ID"),
  c("ON_HAND_QTY", "INTEGER", values="qty"), c("REORDER_QTY", "INTEGER", values="qty"))
t("INV_TXN", "inventory", c("TXN_ID", "INTEGER"), c("ITEM_ID", "INTEGER", "ITEM_MSTR.ITEM_ID"),
  c("WHSE_ID", "INTEGER", "WHSE_MSTR.WHSE_ID"), c("TXN_TYPE_CD", values=["RCPT", "ISSUE", "ADJ", "XFER"]),
  c("TXN_QTY", "INTEGER", values="qty"), c("TXN_DT", values="date"))
t("VEND_MSTR", "inventory", c("VEND_ID", "INTEGER"), c("VEND_NM", values=["Acme Metals", "Nordic Supply", "Iberia Parts"]),
  c("CTRY_CD", values=["DE", "SE", "ES"]))
t("PO_HDR", "inventory", c("PO_ID", "INTEGER"), c("VEND_ID", "INTEGER", "VEND_MSTR.VEND_ID"), c("PO_DT", values="date"),
  c("PO_STAT_CD", values=["OPEN", "CLOSED", "HOLD"]))
t("PO_LN", "inventory", c("PO_LN_ID", "INTEGER"), c("PO_ID", "INTEGER", "PO_HDR.PO_ID"),
  c("ITEM_ID", "INTEGER", "ITEM_MSTR.ITEM_ID"), c("ORD_QTY", "INTEGER", values="qty"), c("UNIT_PRC_AMT", "REAL", values="money"))

# finance: lower-case abbreviations
t("CUST_MSTR", "finance", c("CUST_ID", "INTEGER"), c("CUST_NM", values=["Vanderberg BV", "Sol Ltda", "Fjord AS"]),
  c("CRDT_LMT_AMT", "REAL", values="money"), c("PYMT_TERMS_CD", values=["NET30", "NET60", "COD"]))
t("gl_acct", "finance", c("acct_id", "INTEGER"), c("acct_num", values="code"), c("acct_nm", values=["Cash", "Receivables", "Rent", "Sales Revenue"]),
  c("acct_type_cd", values=["ASSET", "LIABILITY", "REVENUE", "EXPENSE"]))
t("gl_jrnl_hdr", "finance", c("jrnl_id", "INTEGER"), c("jrnl_dt", values="date"), c("posted_flg", values=["Y", "N"]),
  c("src_cd", values=["AP", "AR", "MANUAL"]))
t("gl_jrnl_ln", "finance", c("jrnl_ln_id", "INTEGER"), c("jrnl_id", "INTEGER", "gl_jrnl_hdr.jrnl_id"),
  c("acct_id", "INTEGER", "gl_acct.acct_id"), c("dr_amt", "REAL", values="money"), c("cr_amt", "REAL", values="money"))
t("ar_invoice", "finance", c("invoice_id", "INTEGER"), c("cust_id", "INTEGER", "CUST_MSTR.CUST_ID"), c("invoice_dt", values="date"),
  c("due_dt", values="date"), c("invoice_amt", "REAL", values="money"), c("status_cd", values=["OPEN", "PAID", "OVERDUE"]))
t("ar_pymt", "finance", c("pymt_id", "INTEGER"), c("invoice_id", "INTEGER", "ar_invoice.invoice_id"), c("pymt_dt", values="date"),
  c("pymt_amt", "REAL", values="money"), c("pymt_mthd_cd", values=["WIRE", "CHECK", "CARD"]),
  c("curr_cd", values=["EUR", "USD", "CHF", "GBP", "CAD"]))
t("cost_ctr", "finance", c("cost_ctr_id", "INTEGER"), c("cost_ctr_nm", values=["Plant Ops", "Head Office", "R&D Lab"]),
  c("department_id", "INTEGER", "department.department_id"))
t("budget_line", "finance", c("budget_line_id", "INTEGER"), c("cost_ctr_id", "INTEGER", "cost_ctr.cost_ctr_id"),
  c("acct_id", "INTEGER", "gl_acct.acct_id"), c("fiscal_yr", "INTEGER", values=[2024, 2025, 2026]), c("budget_amt", "REAL", values="money"))

# logistics: snake_case with short forms
t("carrier", "logistics", c("carrier_id", "INTEGER"), c("carrier_name", values=["DHL", "PostNL", "Maersk", "Bring"]),
  c("transport_mode", values=["Air", "Sea", "Road", "Rail"]))
t("shipment", "logistics", c("shipment_id", "INTEGER"), c("order_id", "INTEGER", "SalesOrder.OrderId"),
  c("carrier_id", "INTEGER", "carrier.carrier_id"), c("ship_dt", values="date"),
  c("delivery_status", values=["In Transit", "Delivered", "Lost", "Returned"]), c("weight_kg", "REAL", values="money"),
  c("svc_lvl_cd", values=["STD", "EXP", "ECO"]))
t("delivery_stop", "logistics", c("stop_id", "INTEGER"), c("shipment_id", "INTEGER", "shipment.shipment_id"),
  c("stop_seq", "INTEGER", values="small"), c("city", values=["Rotterdam", "Hamburg", "Antwerp", "Gdansk"]), c("arrived_at", values="date"))
t("vehicle", "logistics", c("vehicle_id", "INTEGER"), c("plate_no", values="code"), c("vehicle_type", values=["Van", "Truck", "Trailer"]),
  c("carrier_id", "INTEGER", "carrier.carrier_id"))
t("driver", "logistics", c("driver_id", "INTEGER"), c("full_name", values="full"), c("license_cd", values=["B", "C", "CE"]),
  c("carrier_id", "INTEGER", "carrier.carrier_id"))
t("route", "logistics", c("route_id", "INTEGER"), c("origin_city", values=["Rotterdam", "Antwerp"]),
  c("dest_city", values=["Hamburg", "Gdansk", "Lyon"]), c("distance_km", "INTEGER", values="qty"))

# healthcare: PascalCase
t("Ward", "healthcare", c("WardId", "INTEGER"), c("WardName", values=["Maternity", "Intensive Care", "Orthopedics"]), c("Floor", "INTEGER", values="small"))
t("Patient", "healthcare", c("PatientId", "INTEGER"), c("FullName", values="full"), c("BirthDate", values="date"),
  c("BloodType", values=["A+", "O-", "B+", "AB+"]))
t("PatientAddress", "healthcare", c("PatientAddressId", "INTEGER"), c("PatientId", "INTEGER", "Patient.PatientId"),
  c("Street", values="street"), c("City", values=["Utrecht", "Leiden", "Delft"]))
t("Physician", "healthcare", c("PhysicianId", "INTEGER"), c("FullName", values="full"),
  c("Specialty", values=["Cardiology", "Oncology", "Pediatrics", "Dermatology"]))
t("Admission", "healthcare", c("AdmissionId", "INTEGER"), c("PatientId", "INTEGER", "Patient.PatientId"),
  c("WardId", "INTEGER", "Ward.WardId"), c("AdmitDate", values="date"), c("DischargeDate", values="date"))
t("VitalSign", "healthcare", c("VitalSignId", "INTEGER"), c("AdmissionId", "INTEGER", "Admission.AdmissionId"),
  c("MeasuredAt", values="date"), c("TempC", "REAL", values="money"), c("PulseBpm", "INTEGER", values="qty"),
  c("SystolicBp", "INTEGER", values="qty"))
t("Diagnosis", "healthcare", c("DiagnosisId", "INTEGER"), c("AdmissionId", "INTEGER", "Admission.AdmissionId"),
  c("IcdCode", values=["J18.9", "S52.5", "G43.9"]), c("Description", values=["Pneumonia", "Fracture", "Migraine"]))
t("Drug", "healthcare", c("DrugId", "INTEGER"), c("DrugName", values=["Ibuprofen", "Amoxicillin", "Metformin", "Insulin"]), c("AtcCode", values="code"))
t("Prescription", "healthcare", c("PrescriptionId", "INTEGER"), c("PatientId", "INTEGER", "Patient.PatientId"),
  c("PhysicianId", "INTEGER", "Physician.PhysicianId"), c("DrugId", "INTEGER", "Drug.DrugId"), c("DosageMg", "INTEGER", values="qty"))

# education: snake_case
t("program", "education", c("program_id", "INTEGER"), c("program_name", values=["Computer Science", "Nursing", "Economics", "History"]))
t("student", "education", c("student_id", "INTEGER"), c("first_name", values="first"), c("last_name", values="last"),
  c("enrolled_on", values="date"), c("program_id", "INTEGER", "program.program_id"))
t("instructor", "education", c("instructor_id", "INTEGER"), c("full_name", values="full"), c("faculty", values=["Science", "Arts", "Medicine"]))
t("course", "education", c("course_id", "INTEGER"), c("course_code", values="code"),
  c("title", values=["Databases", "Anatomy", "Microeconomics", "Medieval Europe"]), c("credits", "INTEGER", values="small"))
t("course_section", "education", c("section_id", "INTEGER"), c("course_id", "INTEGER", "course.course_id"),
  c("instructor_id", "INTEGER", "instructor.instructor_id"), c("room", values=["A101", "B204", "C3"]))
t("enrollment", "education", c("student_id", "INTEGER", "student.student_id"), c("section_id", "INTEGER", "course_section.section_id"),
  c("term", values=["Fall 2025", "Spring 2026"]), c("grade", values=["A", "B", "C", "F"]))

# support: tbl prefix, CamelCase
t("tblAgent", "support", c("AgentID", "INTEGER"), c("AgentName", values="full"), c("Team", values=["Billing", "Technical", "Onboarding"]))
t("tblTicket", "support", c("TicketID", "INTEGER"), c("CustomerID", "INTEGER", "Customer.CustomerId"),
  c("AgentID", "INTEGER", "tblAgent.AgentID"), c("Priority", values=["Low", "Normal", "High", "Urgent"]),
  c("Status", values=["Open", "Escalated", "Resolved"]), c("OpenedAt", values="date"))
t("tblTicketComment", "support", c("CommentID", "INTEGER"), c("TicketID", "INTEGER", "tblTicket.TicketID"),
  c("Body", values=["Customer called back", "Refund issued", "Waiting on vendor"]), c("CreatedAt", values="date"))
t("tblSlaPolicy", "support", c("SlaID", "INTEGER"), c("Priority", values=["Low", "Normal", "High", "Urgent"]), c("ResponseHours", "INTEGER", values="small"))
t("tblKbArticle", "support", c("ArticleID", "INTEGER"), c("Title", values=["Reset password", "Change invoice address", "Track a parcel"]))
t("tblTicketArticle", "support", c("TicketID", "INTEGER", "tblTicket.TicketID"), c("ArticleID", "INTEGER", "tblKbArticle.ArticleID"))

# property: snake_case
t("neighbourhood", "property", c("neighbourhood_id", "INTEGER"), c("nbhd_name", values=["Riverside", "Old Town", "Harbourfront", "Hillcrest"]))
t("unit", "property", c("unit_id", "INTEGER"), c("neighbourhood_id", "INTEGER", "neighbourhood.neighbourhood_id"),
  c("unit_no", values="code"), c("bedrooms", "INTEGER", values="small"))
t("tenant", "property", c("tenant_id", "INTEGER"), c("full_name", values="full"), c("phone", values="postal"))
t("lease", "property", c("lease_id", "INTEGER"), c("unit_id", "INTEGER", "unit.unit_id"), c("tenant_id", "INTEGER", "tenant.tenant_id"),
  c("start_dt", values="date"), c("monthly_rent", "REAL", values="money"))

# card payments: snake_case
t("merchant_category", "payments", c("mcc_id", "INTEGER"), c("category_desc", values=["Groceries", "Fuel", "Restaurants", "Travel"]))
t("merchant", "payments", c("merchant_id", "INTEGER"), c("merchant_name", values=["Shell Ring Road", "Bistro Nord", "FreshMart"]),
  c("mcc_id", "INTEGER", "merchant_category.mcc_id"))
t("card_txn", "payments", c("txn_id", "INTEGER"), c("merchant_id", "INTEGER", "merchant.merchant_id"),
  c("txn_amt", "REAL", values="money"), c("txn_dt", values="date"))

# Filler: look-alike tables per domain, named in the domain's style.
FILL = {
    "crm": ("camel", ["customer", "order", "product", "lead", "opportunity", "quote", "contact", "segment", "account", "price", "discount", "loyalty"]),
    "hr": ("snake", ["employee", "position", "grade", "benefit", "payroll", "skill", "shift", "timesheet", "candidate", "contract", "badge", "address"]),
    "inventory": ("erp", ["ITEM", "WHSE", "BIN", "LOT", "STK", "UOM", "CYCLE_CNT", "SERIAL", "VEND", "RCPT", "PICK", "KIT"]),
    "finance": ("abbr", ["acct", "gl", "ap", "ar", "cust", "txn", "fx_rate", "tax", "asset", "ledger", "invoice", "pymt"]),
    "logistics": ("snake", ["shipment", "carrier", "route", "parcel", "freight", "dock", "customs", "tracking", "zone", "tariff", "pallet", "manifest"]),
    "healthcare": ("camel", ["patient", "visit", "lab", "vital", "allergy", "insurance", "claim", "bed", "nurse", "procedure", "referral", "immunization"]),
    "education": ("snake", ["student", "course", "exam", "assignment", "attendance", "scholarship", "campus", "library", "thesis", "transcript", "semester", "club"]),
    "support": ("tbl", ["Ticket", "Agent", "Queue", "Macro", "Survey", "Chat", "Call", "Escalation", "Tag", "Sla", "Article", "Feedback"]),
    "manufacturing": ("erp", ["WO", "BOM", "ROUTING", "MACH", "QC", "SCRAP", "DOWNTIME", "TOOL", "OPER", "SHIFT", "PLANT", "MTL"]),
    "property": ("snake", ["unit", "lease", "tenant", "property", "building", "rent", "deposit", "inspection", "maintenance", "owner", "parking", "amenity"]),
    "payments": ("snake", ["card", "merchant", "txn", "settlement", "chargeback", "terminal", "authorization", "fee", "payout", "dispute", "wallet", "token"]),
    "marketing": ("snake", ["campaign", "audience", "ad", "click", "impression", "newsletter", "promo", "landing_page", "utm", "channel", "lead_score", "event"]),
}
SUFFIX = ["hist", "log", "stg", "map", "cfg", "snapshot", "archive", "xref", "detail", "summary", "type", "status", "note", "audit", "queue"]
ATTRS = ["code", "name", "desc", "amount", "qty", "date", "flag", "type", "status", "score", "rate", "comment", "ref", "value", "level"]


def style_name(style, words):
    if style == "camel":
        return "".join(w[:1].upper() + w[1:] for w in words)
    if style == "tbl":
        return "tbl" + "".join(w[:1].upper() + w[1:] for w in words)
    if style == "erp":
        return "_".join(w.upper() for w in words)
    return "_".join(w.lower() for w in words)


def style_col(style, word):
    return style_name(style if style != "tbl" else "camel", word.split("_"))


FIRST = ["Anna", "Bram", "Chloe", "Dmitri", "Eva", "Farid", "Greta", "Hugo", "Ines", "Jonas"]
LAST = ["Jansen", "Moreau", "Silva", "Nowak", "Berg", "Keller", "Costa", "Visser"]


def value(kind, rng, i):
    if isinstance(kind, list):
        return kind[i % len(kind)]
    if kind == "first":
        return rng.choice(FIRST)
    if kind == "last":
        return rng.choice(LAST)
    if kind == "full":
        return rng.choice(FIRST) + " " + rng.choice(LAST)
    if kind == "email":
        return "%s.%d@example.org" % (rng.choice(FIRST).lower(), rng.randint(1, 99))
    if kind == "street":
        return "%d %s Street" % (rng.randint(1, 200), rng.choice(["Mill", "Harbour", "Station", "Church"]))
    if kind == "postal":
        return "%04d" % rng.randint(1000, 9999)
    if kind == "date":
        return "20%02d-%02d-%02d" % (rng.randint(20, 26), rng.randint(1, 12), rng.randint(1, 28))
    if kind == "money":
        return round(rng.uniform(5, 5000), 2)
    if kind in ("small",):
        return rng.randint(1, 9)
    if kind == "qty":
        return rng.randint(1, 900)
    if kind == "code":
        return "%s%03d" % (rng.choice("ABCDKX"), rng.randint(0, 999))
    return None


def dedupe(cols):
    seen, out = set(), []
    for col in cols:
        if col[0].lower() not in seen:
            seen.add(col[0].lower())
            out.append(col)
    return out


def create(db, name, cols):
    defs, fks = [], []
    for (cn, typ, fk, _v) in cols:
        defs.append('"%s" %s' % (cn, typ))
        if fk:
            ft, fc = fk.split(".")
            fks.append('FOREIGN KEY ("%s") REFERENCES "%s"("%s")' % (cn, ft, fc))
    pk = cols[0]
    if pk[1] == "INTEGER" and not pk[2]:
        defs[0] += " PRIMARY KEY"
    db.execute('CREATE TABLE "%s" (%s)' % (name, ", ".join(defs + fks)))


def fill_rows(db, name, cols, rng, nrows, offset):
    for r in range(nrows):
        row = []
        for k, (cn, typ, fk, v) in enumerate(cols):
            if k == 0 and typ == "INTEGER" and not fk:
                row.append(r + 1)
            elif fk:
                row.append(rng.randint(1, 5))
            elif v is None:
                row.append(None)
            else:
                row.append(value(v, rng, r + offset))
        db.execute('INSERT INTO "%s" VALUES (%s)' % (name, ",".join("?" * len(row))), row)


def audit_cols(rng, style):
    picked = [a for a in AUDIT if rng.random() < 0.45]
    return [(style_col(style, a), "TEXT", None, "date" if a.endswith("_at") else "code") for a in picked]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--filler", type=int, default=260, help="look-alike tables beside the %d core ones" % len(C))
    ap.add_argument("--rows", type=int, default=6)
    ap.add_argument("--set", choices=["tune", "holdout"], default="tune",
                    help="the questions: those ranking was tuned on, or a holdout set of synonym, coded-value, "
                         "join, trap and aggregate questions written apart from them")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "schema.sqlite")
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    tables = []  # (name, cols) in creation order
    for name, (dom, cols) in C.items():
        style = FILL[dom][0] if dom in FILL else "snake"
        tables.append((name, dedupe(cols + (audit_cols(rng, style) if rng.random() < 0.6 else []))))
    core = list(C)
    doms = sorted(FILL)
    seen = set(n.lower() for n in C)
    made = 0
    while made < a.filler:
        dom = doms[made % len(doms)]
        style, nouns = FILL[dom]
        words = [rng.choice(nouns)]
        other = rng.choice(nouns)
        if rng.random() < 0.5 and other != words[0]:
            words.append(other)
        words.append(rng.choice(SUFFIX))
        if style in ("erp",):
            words = [w.upper() for w in words]
        name = style_name(style, [x for w in words for x in w.split("_")] if style != "erp" else words)
        if name.lower() in seen:
            continue
        seen.add(name.lower())
        cols = [(style_col(style, words[0].lower() + "_" + words[-1] + "_id"), "INTEGER", None, None)]
        for _ in range(rng.randint(2, 5)):
            attr = rng.choice(nouns).lower() + "_" + rng.choice(ATTRS)
            cn = style_col(style, attr)
            if any(x[0].lower() == cn.lower() for x in cols):
                continue
            kind = {"amount": "money", "qty": "qty", "date": "date", "score": "small", "rate": "money",
                    "value": "money", "level": "small"}.get(attr.split("_")[-1], "code")
            cols.append((cn, "REAL" if kind == "money" else "TEXT", None, kind))
        if rng.random() < 0.5:  # a key into a core table of the same domain, as real satellites have
            keyed = [n for n in core if not C[n][1][0][2]]  # tables with their own key
            target = rng.choice([n for n in keyed if C[n][0] == dom] or keyed)
            pkc = C[target][1][0]
            cols.append((pkc[0], "INTEGER", "%s.%s" % (target, pkc[0]), None))
        tables.append((name, dedupe(cols + audit_cols(rng, style))))
        made += 1
    order = tables[:]
    rng.shuffle(order)  # schema order says nothing about relevance
    for name, cols in order:
        create(db, name, cols)
    for name, cols in order:
        fill_rows(db, name, cols, rng, a.rows, rng.randint(0, 3) if name not in C else 0)
    db.commit()
    db.close()
    with open(os.path.join(a.out, "questions.jsonl"), "w") as f:
        for i, (cat, q, tabs) in enumerate(QUESTIONS if a.set == "tune" else HOLDOUT):
            for tb in tabs:
                assert tb in C, tb
            f.write(json.dumps({"id": "q%02d" % (i + 1), "category": cat, "question": q, "tables": tabs}) + "\n")
    print("%s: %d tables, %d questions" % (path, len(tables), len(QUESTIONS if a.set == "tune" else HOLDOUT)))


# (category, question, tables the gold SQL needs)
QUESTIONS = [
    # plain: the words are the names
    ("plain", "How many employees are in each department?", ["employee", "department"]),
    ("plain", "List all carriers and their transport mode.", ["carrier"]),
    ("plain", "What is the average salary of employees?", ["employee"]),
    ("plain", "How many patients have each blood type?", ["Patient"]),
    ("plain", "Which physicians have the specialty with the most prescriptions?", ["Physician", "Prescription"]),
    ("plain", "How many students are enrolled in each program?", ["student", "program"]),
    ("plain", "List the products and their list price.", ["Product"]),
    ("plain", "How many campaigns use each channel?", ["Campaign"]),
    ("plain", "Which wards have the most admissions?", ["Ward", "Admission"]),
    ("plain", "Show the ticket count per agent team.", ["tblTicket", "tblAgent"]),
    ("plain", "What is the total budget amount per cost center?", ["budget_line", "cost_ctr"]),
    ("plain", "List each vehicle type and how many vehicles there are.", ["vehicle"]),
    # value: a value held in a column
    ("value", "How many employees took Parental Leave this year?", ["leave_request"]),
    ("value", "Which employees work in the Rotterdam office?", ["employee", "department", "office_location"]),
    ("value", "How many shipments were Lost?", ["shipment"]),
    ("value", "List patients diagnosed with Pneumonia.", ["Patient", "Admission", "Diagnosis"]),
    ("value", "How many prescriptions for Metformin were written?", ["Prescription", "Drug"]),
    ("value", "What were the sales of Bicycles last month?", ["OrderLine", "Product", "SalesOrder"]),
    ("value", "How many invoices are OVERDUE?", ["ar_invoice"]),
    ("value", "Total payments received by WIRE.", ["ar_pymt"]),
    ("value", "How many Urgent tickets are still Open?", ["tblTicket"]),
    ("value", "Which students study Nursing?", ["student", "program"]),
    ("value", "How many shipments went with PostNL?", ["shipment", "carrier"]),
    ("value", "Which purchase orders are on HOLD?", ["PO_HDR"]),
    ("value", "How much stock of Copper Pipe is on hand?", ["STK_BAL", "ITEM_MSTR"]),
    ("value", "Who completed the Forklift Safety course?", ["employee", "employee_training", "training_course"]),
    ("value", "Which customers live in Tallinn?", ["Customer"]),
    # synonym: other words than the names
    ("synonym", "How many staff members were hired in 2024?", ["employee"]),
    ("synonym", "What is the total quantity on hand per warehouse?", ["STK_BAL", "WHSE_MSTR"]),
    ("synonym", "Which suppliers have open purchase orders?", ["VEND_MSTR", "PO_HDR"]),
    ("synonym", "List general ledger accounts of type expense.", ["gl_acct"]),
    ("synonym", "What is the total debit amount per journal?", ["gl_jrnl_ln"]),
    ("synonym", "Which doctors prescribed the most medication?", ["Physician", "Prescription"]),
    ("synonym", "How many inventory transactions were receipts?", ["INV_TXN"]),
    ("synonym", "What is the credit limit of each client in accounts receivable?", ["CUST_MSTR"]),
    ("synonym", "How many hospital stays lasted more than a week?", ["Admission"]),
    ("synonym", "Which lecturers teach in room B204?", ["instructor", "course_section"]),
    ("synonym", "How many support requests did each customer raise?", ["tblTicket", "Customer"]),
    ("synonym", "What is the average pay per job title?", ["employee"]),
    ("synonym", "Which item descriptions have a unit of measure of KG?", ["ITEM_MSTR"]),
    # join: needs tables the question does not name
    ("join", "Which customers were sent shipments by DHL?", ["Customer", "SalesOrder", "shipment", "carrier"]),
    ("join", "Which vendors supply Hex Bolt M8?", ["VEND_MSTR", "PO_HDR", "PO_LN", "ITEM_MSTR"]),
    ("join", "Which instructors teach students in the Economics program?", ["instructor", "course_section", "enrollment", "student", "program"]),
    ("join", "How much revenue did each sales rep bring per product category?", ["SalesRep", "SalesOrder", "OrderLine", "Product"]),
    ("join", "In which cities do employees of the Payroll department work?", ["employee", "department", "office_location"]),
    ("join", "Which drugs were prescribed to patients in the Maternity ward?", ["Drug", "Prescription", "Patient", "Admission", "Ward"]),
    ("join", "Which knowledge base articles were used for tickets of customers in Ghent?", ["tblKbArticle", "tblTicketArticle", "tblTicket", "Customer"]),
    ("join", "Which accounts are budgeted for the Research department?", ["gl_acct", "budget_line", "cost_ctr", "department"]),
    ("join", "Which products were in orders shipped by Maersk?", ["Product", "OrderLine", "SalesOrder", "shipment", "carrier"]),
    ("join", "Total payments per customer credit terms.", ["ar_pymt", "ar_invoice", "CUST_MSTR"]),
    ("join", "Which courses are taken by students enrolled in Fall 2025?", ["course", "course_section", "enrollment"]),
    ("join", "Which customers were targeted by the Spring Ride campaign?", ["Customer", "CampaignCustomer", "Campaign"]),
    # trap: a look-alike table exists
    ("trap", "List the street addresses of employees.", ["employee_address"]),
    ("trap", "List the street addresses of customers.", ["CustomerAddress"]),
    ("trap", "Which patients live in Leiden?", ["Patient", "PatientAddress"]),
    ("trap", "Which courses give more than 5 credits?", ["course"]),
    ("trap", "Which employees completed training courses from the Red Cross?", ["employee", "employee_training", "training_course"]),
    ("trap", "What is the payment term code of each finance customer master record?", ["CUST_MSTR"]),
    ("trap", "Which sales orders are Cancelled?", ["SalesOrder"]),
    ("trap", "How many comments does each ticket have?", ["tblTicket", "tblTicketComment"]),
    ("trap", "What is the response time in hours for each SLA priority?", ["tblSlaPolicy"]),
    ("trap", "Which delivery stops were in Hamburg?", ["delivery_stop"]),
    ("trap", "Show the journal header dates with their posted flag.", ["gl_jrnl_hdr"]),
    ("trap", "List the performance review ratings per employee.", ["performance_review", "employee"]),
]

# Written apart from QUESTIONS and not used to tune ranking: words a
# schema does not use (a synonym, a practitioner's noun, a currency's name
# for its code), bridge tables no word names, look-alikes, aggregates.
HOLDOUT = [
    ("synonym", "How many staff members does each division have?", ["employee", "department"]),
    ("synonym", "Which clients have raised complaints?", ["Customer", "tblTicket"]),
    ("synonym", "What was the highest body temperature recorded for each patient?", ["VitalSign", "Admission", "Patient"]),
    ("synonym", "List the average heart rate per ward.", ["VitalSign", "Admission", "Ward"]),
    ("synonym", "Which teachers have more than two classes?", ["instructor", "course_section"]),
    ("synonym", "How many pupils are in each programme?", ["student", "program"]),
    ("synonym", "Which couriers handle sea transport?", ["carrier"]),
    ("synonym", "What is the total wage bill per department?", ["employee", "department"]),
    ("value", "How many contractors work in Research?", ["employee", "department"]),
    ("value", "Which cardiologists prescribed Insulin?", ["Physician", "Prescription", "Drug"]),
    ("value", "How many payments were made in Swiss francs?", ["ar_pymt"]),
    ("value", "Total payments in US dollars per customer.", ["ar_pymt", "ar_invoice", "CUST_MSTR"]),
    ("value", "How many prescriptions did the oncologists write?", ["Physician", "Prescription"]),
    ("value", "List the pediatricians.", ["Physician"]),
    ("value", "What is the average rent in Riverside?", ["lease", "unit", "neighbourhood"]),
    ("join", "Which tenants rent units in Old Town?", ["tenant", "lease", "unit", "neighbourhood"]),
    ("join", "How much was spent at Restaurants by card?", ["card_txn", "merchant", "merchant_category"]),
    ("join", "Which wards had patients with a fever above 39 degrees?", ["Ward", "Admission", "VitalSign"]),
    ("join", "Which carriers delivered orders of customers in Bergen?", ["carrier", "shipment", "SalesOrder", "Customer"]),
    ("join", "Which programs do the students taught by each instructor belong to?", ["program", "student", "enrollment", "course_section", "instructor"]),
    ("trap", "List the city of each patient's address.", ["PatientAddress"]),
    ("trap", "Which merchants are in the Fuel category?", ["merchant", "merchant_category"]),
    ("trap", "Show the vendor names from the vendor master.", ["VEND_MSTR"]),
    ("trap", "How many bedrooms does each unit have?", ["unit"]),
    ("aggregate", "What is the average salary per job title of contractors?", ["employee"]),
    ("aggregate", "How many admissions per ward last year?", ["Admission", "Ward"]),
    ("aggregate", "What is the total on-hand quantity per item?", ["STK_BAL", "ITEM_MSTR"]),
    ("aggregate", "What is the monthly total of card transactions?", ["card_txn"]),
    ("aggregate", "Average dosage per drug.", ["Prescription", "Drug"]),
    ("aggregate", "Maximum pulse recorded per admission.", ["VitalSign"]),
]

if __name__ == "__main__":
    main()
