#!/usr/bin/env python3
"""schema_knowledge.py — CTest: one line of the knowledge file fixes each
class of question the schema's own words cannot: words the schema does not
use ("crew members" for employee), coded values the question does not state
(loonies for curr_cd 'CAD', express for svc_lvl_cd 'EXP', heart specialists
for Specialty 'Cardiology'), and bridge tables no word names (an example
query whose question is near); and nothing else moves: every other
question's ranking stays as it was without the line. Where the line shows
in another question's prompt (a definition sharing a word with it, a
column's description on a card) it takes room there, so that question may
lose extras at the end of its picks, never a table it needs and never the
order of the rest; except that a column's description makes its table's
card longer, so a question showing that card has less room for the others
(k3c: reported, not failed). Runs `tabletalk eval
schema` on a small instance of bench/schema/gen.py's database.

    schema_knowledge.py TABLETALK GEN_PY
"""
import json
import os
import subprocess
import sys
import tempfile

tt, gen = sys.argv[1], sys.argv[2]
fails = []

# (id, question, tables needed, the knowledge file's one line, missed without it)
CASES = [
    ("k1", "How many crew members joined in 2024?", ["employee"],
     {"definitions": ["crew members = the employee table"]}, True),
    ("k2", "What was received in loonies?", ["ar_pymt"],
     {"definitions": ["loonies means curr_cd = 'CAD'"]}, True),
    ("k3", "How many went express?", ["shipment"],
     {"definitions": ["express means shipment.svc_lvl_cd = 'EXP'"]}, True),
    ("k3c", "How many went economy?", ["shipment"],
     {"columns": {"shipment.svc_lvl_cd": "'EXP' = express; 'STD' = standard; 'ECO' = economy"}}, True),
    ("k4", "Which heart specialists prescribed Insulin?", ["Physician", "Prescription", "Drug"],
     {"definitions": ["heart specialist: Physician.Specialty = 'Cardiology'"]}, False),
    ("k5", "How much was spent on Fuel per month?", ["card_txn", "merchant", "merchant_category"],
     {"examples": [{"question": "How much was spent on Groceries per month?",
                    "sql": "SELECT strftime('%Y-%m', t.txn_dt), SUM(t.txn_amt) FROM card_txn t "
                           "JOIN merchant m ON m.merchant_id = t.merchant_id "
                           "JOIN merchant_category c ON c.mcc_id = m.mcc_id "
                           "WHERE c.category_desc = 'Groceries' GROUP BY 1"}]}, None),
]
BUDGETS = ["1000", "2000"]


def run(d):
    p = subprocess.run([tt, "eval", "schema", "--data", d, "--json", "--details"] +
                       [x for b in BUDGETS for x in ("--budget", b)], capture_output=True, text=True)
    if p.returncode != 0:
        fails.append("exit %d: %s" % (p.returncode, p.stderr))
        return {}
    out = {}
    for b in json.loads(p.stdout)["budgets"]:
        for q in b["per_question"]:
            out[(b["budget"], q["id"])] = (q["all_needed"], [x["table"] for x in q["picked"]])
    return out


with tempfile.TemporaryDirectory() as d:
    subprocess.run([sys.executable, gen, "--out", d, "--seed", "7", "--filler", "60"], check=True,
                   stdout=subprocess.DEVNULL)
    qpath = os.path.join(d, "questions.jsonl")
    with open(qpath) as f:
        tune = f.read()
    with open(qpath, "w") as f:
        for cid, q, tables, _line, _missed in CASES:
            f.write(json.dumps({"id": cid, "category": "knowledge", "question": q, "tables": tables}) + "\n")
        f.write(tune)
    kpath = os.path.join(d, "schema.knowledge.json")
    base = run(d)
    trimmed = []
    for cid, q, tables, line, missed in CASES:
        if missed is not None:
            was = all(base[(b, cid)][0] for b in map(int, BUDGETS))
            if was == missed:
                fails.append("%s: without the line it is %s, the test expects it %s" %
                             (cid, "found" if was else "missed", "missed" if missed else "found"))
        with open(kpath, "w") as f:
            json.dump(line, f)
        got = run(d)
        os.remove(kpath)
        for b in map(int, BUDGETS):
            if not got[(b, cid)][0]:
                fails.append("%s at %d: the line %r does not bring %r (picked %r)" %
                             (cid, b, line, tables, got[(b, cid)][1]))
            for (bb, other), (ok, picks) in got.items():
                if bb != b or other.startswith("k"):  # the generator's questions are the others
                    continue
                was_ok, was = base[(b, other)]
                grown = "columns" in line and any(k.split(".")[0] in was for k in line["columns"])
                if grown and picks != was:
                    trimmed.append("%s/%s@%d (a longer card: %s)" % (cid, other, b, "needed table lost" if was_ok and not ok else "extras"))
                elif picks != was[:len(picks)] or (was_ok and not ok):
                    fails.append("%s's line moved %s at %d: %r -> %r" % (cid, other, b, was, picks))
                elif picks != was:
                    trimmed.append("%s/%s@%d" % (cid, other, b))
    print("%d knowledge cases checked; extras trimmed for room: %s" % (len(CASES), ", ".join(trimmed) or "none"))

for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
