#!/usr/bin/env python3
"""schema_bench.py — CTest for the schema-retrieval benchmark: generates a
small instance of bench/schema/gen.py's database (a fixed seed, few filler
tables, so it runs in seconds), runs `tabletalk eval schema --json` on it
and checks the output's shape, that no budget is overspent, and a recall
floor; also the command's refusals (no --data, a bad questions file).

    schema_bench.py TABLETALK GEN_PY FLOOR_AT_2000
"""
import json
import os
import subprocess
import sys
import tempfile

tt, gen, floor = sys.argv[1], sys.argv[2], float(sys.argv[3])
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)


with tempfile.TemporaryDirectory() as d:
    subprocess.run([sys.executable, gen, "--out", d, "--seed", "7", "--filler", "60"], check=True,
                   stdout=subprocess.DEVNULL)
    p = subprocess.run([tt, "eval", "schema", "--data", d, "--budget", "1000", "--budget", "2000", "--json",
                        "--details"], capture_output=True, text=True)
    check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr))
    r = json.loads(p.stdout)
    ncore = r["tables"] - 60
    check(ncore >= 50, "core tables: %d" % ncore)
    check(r["questions"] >= 60, "questions: %d" % r["questions"])
    check([b["budget"] for b in r["budgets"]] == [1000, 2000], "budgets %r" % [b["budget"] for b in r["budgets"]])
    for b in r["budgets"]:
        for k in ("all_needed_recall", "table_recall", "tables_shown", "tokens", "questions"):
            check(k in b, "budget %d lacks %s" % (b["budget"], k))
        check(set(b["categories"]) == {"plain", "value", "synonym", "join", "trap"},
              "categories %r" % sorted(b["categories"]))
        check(b["tokens"] <= b["budget"], "budget %d overspent: %.0f tokens" % (b["budget"], b["tokens"]))
        # spent as ask spends it: the table index takes its part first
        check(not b["whole_schema"] and 0 < b["card_budget"] < b["budget"] and b["tokens"] <= b["card_budget"],
              "budget %d: cards get %r after the index, took %.0f" % (b["budget"], b["card_budget"], b["tokens"]))
        check(0 <= b["all_needed_recall"] <= b["table_recall"] <= 1, "recalls out of order at %d" % b["budget"])
        check(len(b["per_question"]) == r["questions"], "per_question entries")
        for q in b["per_question"]:
            check(q["tokens"] <= b["card_budget"], "%s over budget" % q["id"])
    at2000 = r["budgets"][1]["all_needed_recall"]
    check(at2000 >= floor, "all-needed recall at 2000 tokens %.3f is below the floor %.2f" % (at2000, floor))
    print("all-needed recall: %.3f at 1000, %.3f at 2000 tokens" % (r["budgets"][0]["all_needed_recall"], at2000))
    # the plain form prints a table per budget
    p = subprocess.run([tt, "eval", "schema", "--data", d, "--budget", "2000"], capture_output=True, text=True)
    check(p.returncode == 0 and "budget 2000 tokens" in p.stdout and "all-needed" in p.stdout, "plain output")
    # refusals
    p = subprocess.run([tt, "eval", "schema"], capture_output=True, text=True)
    check(p.returncode == 2 and "--data" in p.stderr, "no --data: exit %d" % p.returncode)
    with open(os.path.join(d, "questions.jsonl"), "w") as f:
        f.write('{"question": "no tables"}\n')
    p = subprocess.run([tt, "eval", "schema", "--data", d], capture_output=True, text=True)
    check(p.returncode == 1 and "line 1" in p.stderr, "bad questions file: exit %d %s" % (p.returncode, p.stderr))

for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
