#!/usr/bin/env python3
"""schema_determinism.py BIN GEN — the same database and question give the
same cards and picks on an idle and on a saturated machine.

A generated 317-table database (bench/schema/gen.py, 500 rows a table) is
read through `tabletalk schema` and `tabletalk schema --question ... --json`:

- idle, with no time limit (TABLETALK_SCHEMA_SECONDS=0): the reference;
- under a CPU hog (two busy-loop processes), cold
  (an empty cache) with the default limit: each output either equals the
  reference, or says it is incomplete (`complete: false` and a warning) and
  then equals it once later runs have read the rest; never different
  without saying so;
- under the hog again, warm: equal to the reference;
- with a limit that has always run out: incomplete and said so; the next
  run without a limit completes it to the reference.

No time is asserted anywhere: the hog only makes wall-clock limits run out
where they still could.
"""
import json
import os
import subprocess
import sys
import tempfile

BIN, GEN = sys.argv[1:3]
QUESTIONS = [
    "How many shipments went with PostNL?",
    "Which employees work in the Rotterdam office?",
    "How many prescriptions for Metformin were written?",
    "Which vendors supply Hex Bolt M8?",
]
failures = []


def bad(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(args, cache, limit=None):
    env = dict(os.environ, TABLETALK_CACHE_DIR=cache, NO_COLOR="1")
    env.pop("TABLETALK_SCHEMA_SECONDS", None)
    if limit is not None:
        env["TABLETALK_SCHEMA_SECONDS"] = limit
    r = subprocess.run([BIN] + args, capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        bad(f"{' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r


def outputs(db, cache, limit=None):
    """(cards text, [question JSON...], [stderr...]) of one pass."""
    cards = run(["schema", db], cache, limit)
    answers = [run(["schema", db, "--question", q, "--json"], cache, limit) for q in QUESTIONS]
    return cards, answers


def complete(r):
    try:
        return json.loads(r.stdout)["complete"] is True
    except (ValueError, KeyError):
        return False


def said_incomplete(r):
    return "the schema is incomplete" in r.stderr


def check_pass(name, db, cache, ref_cards, ref_answers, limit=None):
    """Every output of a pass equals the reference, or says it is
    incomplete; an incomplete pass is followed by runs that read the rest
    (each for up to its limit) until one is whole. Returns the number of
    passes before the whole one."""
    for attempt in range(40):
        cards, answers = outputs(db, cache, limit)
        if said_incomplete(cards):
            if "no example values yet" not in cards.stdout:
                bad(f"{name}: the cards of the tables not read yet do not say so")
        elif cards.stdout != ref_cards.stdout:
            bad(f"{name}: the cards differ from the reference without saying so")
        for q, a, ref in zip(QUESTIONS, answers, ref_answers):
            if complete(a) and a.stdout != ref.stdout:
                bad(f"{name}: '{q}' picks differently without saying so:\n{a.stdout}\n{ref.stdout}")
            if not complete(a) and not said_incomplete(a):
                bad(f"{name}: '{q}': incomplete, and no warning says so")
        if all(complete(a) for a in answers) and not said_incomplete(cards):
            return attempt
    bad(f"{name}: still incomplete after 40 passes")
    return None


def hog():
    """Two busy-loop processes, as many as the cores of the 2-core machines
    the tests run on: every core saturated."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]


def main():
    with tempfile.TemporaryDirectory(prefix="tt-determinism-") as tmp:
        subprocess.run([sys.executable, GEN, "--out", tmp, "--seed", "1", "--rows", "500"],
                       check=True, capture_output=True)
        db = os.path.join(tmp, "schema.sqlite")
        ref_cards, ref_answers = outputs(db, os.path.join(tmp, "ref"), limit="0")
        for a in ref_answers:
            if not complete(a):
                bad("the reference, read with no limit, is not complete")
        if failures:
            return 1
        hogs = hog()
        try:
            runs = check_pass("cold under a CPU hog", db, os.path.join(tmp, "hog"), ref_cards, ref_answers)
            print(f"cold under the hog: {'complete at once' if runs == 0 else f'completed by run {runs}'}")
            check_pass("warm under a CPU hog", db, os.path.join(tmp, "hog"), ref_cards, ref_answers)
            cut = os.path.join(tmp, "cut")
            cards = run(["schema", db], cut, limit="0.000001")
            answer = run(["schema", db, "--question", QUESTIONS[0], "--json"], cut, limit="0.000001")
            if not said_incomplete(cards) or "no example values yet" not in cards.stdout:
                bad("a limit that ran out at once: the cards do not say the schema is incomplete")
            if complete(answer):
                bad("a limit that ran out at once: --json says complete")
            check_pass("completed after a cut", db, cut, ref_cards, ref_answers, limit="0")
        finally:
            for p in hogs:
                p.kill()
                p.wait()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
