/* lexicon.c — the built-in lexicon: common domain words a question uses
 * for what a schema names otherwise, as data. Three tables: groups of
 * words that mean the same thing (staff, employee, personnel), any of
 * which brings the others into the question; one-way meanings (a body
 * temperature is a vital sign, medication is a drug); and words that name
 * values (Swiss francs are 'CHF', a cardiologist practises 'Cardiology'),
 * which are looked up in the value index and add schema words too. Keys
 * are matched by stem, so plurals and inflections meet ("cardiologists",
 * "staffers"). Nothing here is about one database: a value the schema does
 * not hold links nothing. */
#include "schema/steer.h"

#include <stdio.h>
#include <string.h>

#define TT_LEX_SAME_WEIGHT 0.8  /* a synonym is a guess: a little less than the word */
#define TT_LEX_MEANS_WEIGHT 0.7
#define TT_LEX_VALUE_WEIGHT 0.6 /* the schema words a value's name implies */

/* Words that mean the same thing; a row ends with NULL. */
static const char *const tt_lex_same[][9] = {
    {"employee", "staff", "staffer", "worker", "personnel", "workforce", "colleague", "headcount", NULL},
    {"customer", "client", "buyer", "shopper", "purchaser", "patron", "consumer", NULL},
    {"vendor", "supplier", "seller", NULL},
    {"physician", "doctor", "clinician", "practitioner", NULL},
    {"instructor", "teacher", "lecturer", "professor", "tutor", NULL},
    {"student", "pupil", "learner", "enrollee", NULL},
    {"course", "class", "module", NULL},
    {"salary", "pay", "wage", "compensation", "earnings", NULL},
    {"admission", "hospitalization", "hospitalisation", "stay", "inpatient", NULL},
    {"ticket", "incident", "complaint", NULL},
    {"invoice", "bill", NULL},
    {"shipment", "parcel", "consignment", "package", "delivery", NULL},
    {"carrier", "courier", "shipper", "haulier", "transporter", NULL},
    {"product", "merchandise", "goods", NULL},
    {"warehouse", "depot", "storehouse", NULL},
    {"diagnosis", "condition", "illness", "disease", NULL},
    {"department", "division", NULL},
    {"manager", "supervisor", "boss", NULL},
    {"enrollment", "enrolment", "registration", NULL},
    {"appointment", "booking", NULL},
    {"tenant", "renter", "lessee", "occupant", NULL},
    {"landlord", "lessor", "owner", NULL},
    {"lease", "tenancy", "rental", NULL},
    {"neighbourhood", "neighborhood", "district", NULL},
    {"payment", "remittance", NULL},
    {"vehicle", "truck", "van", NULL},
    {"driver", "chauffeur", NULL},
    {"review", "appraisal", "evaluation", NULL},
    {"leave", "absence", "vacation", "holiday", NULL},
    {"medication", "medicine", "drug", NULL},
    {"nurse", "caregiver", NULL},
    {"grade", "mark", NULL},
    {"region", "territory", NULL},
    {"plant", "factory", NULL},
    {"machine", "equipment", NULL},
};

/* One-way: what a phrase stands for in a schema. */
static const char *const tt_lex_means[][2] = {
    {"temperature", "vital temperature temp"},  {"body temperature", "vital temperature temp"},
    {"fever", "vital temperature temp"},        {"heart rate", "vital pulse heart rate"},
    {"pulse", "vital heart rate"},              {"blood pressure", "vital systolic diastolic bp"},
    {"respiratory rate", "vital respiration"},  {"oxygen saturation", "vital spo2 oxygen"},
    {"blood test", "lab result test"},          {"lab test", "lab result test"},
    {"prescribe", "prescription"},              {"medication", "prescription"},
    {"hire", "employee hire"},                  {"hired", "employee hire"},
    {"fire", "employee termination"},           {"contractor", "employee contract"},
    {"freelancer", "employee contract"},        {"intern", "employee"},
    {"support request", "ticket"},              {"support", "ticket"},
    {"revenue", "amount sale"},                 {"spend", "amount"},
    {"cost", "amount"},                         {"sale", "order"},
    {"ledger", "journal"},                      {"shipped", "shipment"},
    {"sent", "shipment"},                       {"transport", "carrier"},
    {"subject", "course"},                      {"admit", "admission"},
    {"discharge", "admission"},                 {"earn", "salary"},
    {"paid", "payment"},                        {"refund", "return"},
    {"rent", "lease rental"},                   {"exchange rate", "fx rate currency"},      {"currency", "currency curr"},
    {"phone", "telephone phone"},               {"tax", "tax vat"},
    {"headquarters", "office location"},        {"branch", "office location store"},
    {"stock", "inventory stock"},               {"on hand", "stock quantity"},
    {"scrap", "scrap waste"},                   {"downtime", "downtime outage"},
};

/* Phrases that name values: the values as schemas write them ('|' between
 * forms), and the schema words they imply. */
static const char *const tt_lex_values[][3] = {
    /* currencies: names and ISO 4217 codes */
    {"us dollar", "USD|US Dollar", "currency"},        {"dollar", "USD", "currency"},
    {"euro", "EUR|Euro", "currency"},                  {"pound sterling", "GBP", "currency"},
    {"british pound", "GBP", "currency"},              {"sterling", "GBP", "currency"},
    {"swiss franc", "CHF|Swiss Franc", "currency"},    {"franc", "CHF", "currency"},
    {"japanese yen", "JPY", "currency"},               {"yen", "JPY|Yen", "currency"},
    {"yuan", "CNY", "currency"},                       {"renminbi", "CNY", "currency"},
    {"canadian dollar", "CAD", "currency"},            {"australian dollar", "AUD", "currency"},
    {"new zealand dollar", "NZD", "currency"},         {"singapore dollar", "SGD", "currency"},
    {"hong kong dollar", "HKD", "currency"},           {"swedish krona", "SEK", "currency"},
    {"krona", "SEK", "currency"},                      {"norwegian krone", "NOK", "currency"},
    {"danish krone", "DKK", "currency"},               {"zloty", "PLN", "currency"},
    {"rupee", "INR", "currency"},                      {"brazilian real", "BRL", "currency"},
    {"mexican peso", "MXN", "currency"},               {"rand", "ZAR", "currency"},
    {"lira", "TRY", "currency"},                       {"ruble", "RUB", "currency"},
    {"rouble", "RUB", "currency"},                     {"koruna", "CZK", "currency"},
    {"forint", "HUF", "currency"},                     {"korean won", "KRW", "currency"},
    {"usd", "US Dollar|Dollar", "currency"},           {"eur", "Euro", "currency"},
    {"gbp", "Pound Sterling|British Pound", "currency"}, {"chf", "Swiss Franc", "currency"},
    {"jpy", "Yen|Japanese Yen", "currency"},
    /* practitioners and their specialties */
    {"cardiologist", "Cardiology", "physician doctor specialty"},
    {"cardiac", "Cardiology", "specialty"},
    {"oncologist", "Oncology", "physician doctor specialty"},
    {"cancer", "Oncology", "specialty"},
    {"pediatrician", "Pediatrics|Paediatrics", "physician doctor specialty"},
    {"paediatrician", "Paediatrics|Pediatrics", "physician doctor specialty"},
    {"dermatologist", "Dermatology", "physician doctor specialty"},
    {"neurologist", "Neurology", "physician doctor specialty"},
    {"radiologist", "Radiology", "physician doctor specialty"},
    {"orthopedist", "Orthopedics|Orthopaedics", "physician doctor specialty"},
    {"orthopaedic surgeon", "Orthopaedics|Orthopedics", "physician doctor specialty"},
    {"psychiatrist", "Psychiatry", "physician doctor specialty"},
    {"gynecologist", "Gynecology|Gynaecology", "physician doctor specialty"},
    {"obstetrician", "Obstetrics", "physician doctor specialty"},
    {"anesthesiologist", "Anesthesiology|Anaesthesia", "physician doctor specialty"},
    {"anaesthetist", "Anaesthesia|Anesthesiology", "physician doctor specialty"},
    {"endocrinologist", "Endocrinology", "physician doctor specialty"},
    {"gastroenterologist", "Gastroenterology", "physician doctor specialty"},
    {"nephrologist", "Nephrology", "physician doctor specialty"},
    {"urologist", "Urology", "physician doctor specialty"},
    {"pulmonologist", "Pulmonology", "physician doctor specialty"},
    {"ophthalmologist", "Ophthalmology", "physician doctor specialty"},
    {"hematologist", "Hematology|Haematology", "physician doctor specialty"},
    {"rheumatologist", "Rheumatology", "physician doctor specialty"},
    {"surgeon", "Surgery|General Surgery", "physician doctor specialty"},
    {"general practitioner", "General Practice|Family Medicine", "physician doctor specialty"},
    {"family doctor", "Family Medicine|General Practice", "physician doctor specialty"},
    {"internist", "Internal Medicine", "physician doctor specialty"},
    {"psychologist", "Psychology", "specialty"},
    {"dentist", "Dentistry", "specialty"},
    /* employment types */
    {"contractor", "Contractor|Contract|CTR|CON", "employee type"},
    {"full time", "Full-time|Full Time|FT|FTE", "employee type"},
    {"part time", "Part-time|Part Time|PT|PTE", "employee type"},
    {"temporary", "Temporary|Temp|TMP", "employee type"},
    {"intern", "Intern|Internship", "employee type"},
};

/* Whether the stemmed words of phrase stand at words[at...]; returns how
 * many words it covers (0: no). */
static size_t tt_lex_at(const tt_qword *words, size_t n, size_t at, const char *phrase) {
  size_t k = 0;
  const char *p = phrase;
  while (*p) {
    while (*p == ' ') p++;
    if (!*p) break;
    const char *end = strchr(p, ' ');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char w[24];
    snprintf(w, sizeof w, "%.*s", (int)(len < 23 ? len : 23), p);
    char s[24];
    memcpy(s, w, sizeof s);
    tt_schema_stem(s);
    if (at + k >= n) return 0;
    if (strcmp(words[at + k].raw, w) != 0 && strcmp(words[at + k].stem, s) != 0) return 0;
    k++;
    p += len;
  }
  return k;
}

/* Whether phrase occurs anywhere in the question. */
static bool tt_lex_has(const tt_qword *words, size_t n, const char *phrase) {
  for (size_t at = 0; at < n; at++)
    if (tt_lex_at(words, n, at, phrase)) return true;
  return false;
}

static void tt_lex_same_groups(const tt_qword *words, size_t n, tt_steer *st) {
  for (size_t g = 0; g < sizeof tt_lex_same / sizeof *tt_lex_same; g++) {
    size_t said = SIZE_MAX;
    for (size_t m = 0; tt_lex_same[g][m] && said == SIZE_MAX; m++)
      if (tt_lex_has(words, n, tt_lex_same[g][m])) said = m;
    if (said == SIZE_MAX) continue;
    for (size_t m = 0; tt_lex_same[g][m]; m++)
      if (m != said) tt_steer_add_words(st, tt_lex_same[g][m], TT_LEX_SAME_WEIGHT);
  }
}

void tt_lexicon_steer(const tt_qword *words, size_t n, tt_steer *st) {
  tt_lex_same_groups(words, n, st);
  for (size_t i = 0; i < sizeof tt_lex_means / sizeof *tt_lex_means; i++)
    if (tt_lex_has(words, n, tt_lex_means[i][0])) tt_steer_add_words(st, tt_lex_means[i][1], TT_LEX_MEANS_WEIGHT);
  for (size_t i = 0; i < sizeof tt_lex_values / sizeof *tt_lex_values; i++) {
    const char *const *e = tt_lex_values[i];
    if (!tt_lex_has(words, n, e[0])) continue;
    tt_steer_add_words(st, e[2], TT_LEX_VALUE_WEIGHT);
    char form[64];
    for (const char *p = e[1]; *p;) {
      const char *bar = strchr(p, '|');
      size_t len = bar ? (size_t)(bar - p) : strlen(p);
      snprintf(form, sizeof form, "%.*s", (int)(len < 63 ? len : 63), p);
      char *why = tt_xasprintf("lexicon: '%s' is '%s'", e[0], form);
      tt_steer_add_value(st, form, false, why);
      free(why);
      p += len + (bar != NULL);
    }
  }
}

/* ---- the steer itself --------------------------------------------------------------------- */

void tt_steer_add_words(tt_steer *st, const char *words, double weight) {
  for (size_t i = 0; i < st->nwords; i++)
    if (strcmp(st->words[i], words) == 0) return;
  if (st->nwords == TT_STEER_MAX) return;
  st->words[st->nwords] = tt_xstrdup(words);
  st->weights[st->nwords++] = weight;
}

void tt_steer_add_value(tt_steer *st, const char *text, bool strong, const char *reason) {
  for (size_t i = 0; i < st->nvalues; i++)
    if (strcmp(st->values[i].text, text) == 0) {
      st->values[i].strong |= strong;
      return;
    }
  if (st->nvalues == TT_STEER_MAX) return;
  st->values[st->nvalues++] = (tt_steer_value){.text = tt_xstrdup(text), .strong = strong,
                                               .reason = tt_xstrdup(reason)};
}

void tt_steer_add_seed(tt_steer *st, size_t table, const char *reason) {
  for (size_t i = 0; i < st->nseeds; i++)
    if (st->seeds[i].table == table) return;
  if (st->nseeds == TT_STEER_MAX) return;
  st->seeds[st->nseeds++] = (tt_steer_seed){.table = table, .reason = tt_xstrdup(reason)};
}

void tt_steer_free(tt_steer *st) {
  for (size_t i = 0; i < st->nwords; i++) free(st->words[i]);
  for (size_t i = 0; i < st->nvalues; i++) {
    free(st->values[i].text);
    free(st->values[i].reason);
  }
  for (size_t i = 0; i < st->nseeds; i++) free(st->seeds[i].reason);
  *st = (tt_steer){0};
}
