#!/usr/bin/env python3
"""selector_eval.py — measures the selector step (--selector) with a real
model: for every labelled question of a schema benchmark folder (written by
gen.py), runs `tabletalk ask` with the selector off and on at each schema
budget, reads each run's trace, and reports the all-needed recall of the
tables that went with the question in full (the `schema` event), the
selector's own recall and precision (the tables its pick_tables call
named), and what the step costs (its call's prompt and output tokens, its
latency). Only Python's standard library; the model is any endpoint
`tabletalk ask --base-url` takes (or --model-path for the embedded engine).

    python3 bench/schema/selector_eval.py --data DIR --tabletalk build/tabletalk \
        --base-url http://127.0.0.1:8080/v1 [--budget 1000 --budget 2000] [--json]

The answers themselves are not judged here (`eval spider` does that); a
run that fails still has its schema event and selector call.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def trace_of(out):
    try:
        path = json.loads(out)["trace"]
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except (ValueError, KeyError, OSError, TypeError):
        return []


def one(a, q, budget, mode, state):
    cmd = [a.tabletalk, "ask", os.path.join(a.data, "schema.sqlite"), q["question"], "--json",
           "--state-dir", state, "--schema-budget", str(budget), "--selector", mode] + a.model_args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    events = trace_of(p.stdout)
    schema = next((e for e in events if e.get("event") == "schema"), {})
    shown = [t["table"].lower() for t in schema.get("tables") or []]
    sel = next((e for e in events if e.get("event") == "model_call" and e.get("tool") == "pick_tables"), None)
    named = []
    if sel:
        try:
            named = [str(t).lower() for t in json.loads(sel.get("arguments") or "{}").get("tables", [])]
        except ValueError:
            pass
    need = [t.lower() for t in q["tables"]]
    return {
        "all_needed": all(t in shown for t in need),
        "named_recall": sum(t in named for t in need) / len(need) if sel else None,
        "named_precision": (sum(t in need for t in named) / len(named)) if named else None,
        "selector_input": sel.get("input_tokens", 0) if sel else 0,
        "selector_output": sel.get("output_tokens", 0) if sel else 0,
        "selector_ms": sel.get("latency_ms", 0) if sel else 0,
        "status": p.returncode,
    }


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="a folder gen.py wrote")
    ap.add_argument("--tabletalk", default="build/tabletalk")
    ap.add_argument("--budget", type=int, action="append")
    ap.add_argument("--base-url")
    ap.add_argument("--model")
    ap.add_argument("--model-path")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    a.budget = a.budget or [1000, 2000]
    a.model_args = []
    for flag, v in (("--base-url", a.base_url), ("--model", a.model), ("--model-path", a.model_path)):
        if v:
            a.model_args += [flag, v]
    if not a.base_url and not a.model_path:
        sys.exit("selector_eval.py: give --base-url or --model-path")
    with open(os.path.join(a.data, "questions.jsonl")) as f:
        qs = [json.loads(line) for line in f if line.strip()]
    report = {"data": a.data, "questions": len(qs), "budgets": []}
    with tempfile.TemporaryDirectory() as state:
        for b in a.budget:
            row = {"budget": b}
            for mode in ("off", "on"):
                runs = [(q, one(a, q, b, mode, state)) for q in qs]
                cats = {}
                for q, r in runs:
                    cats.setdefault(q.get("category", "?"), []).append(r["all_needed"])
                row[mode] = {
                    "all_needed_recall": mean([r["all_needed"] for _, r in runs]),
                    "categories": {c: mean(v) for c, v in sorted(cats.items())},
                    "named_recall": mean([r["named_recall"] for _, r in runs]),
                    "named_precision": mean([r["named_precision"] for _, r in runs]),
                    "selector_input_tokens": mean([r["selector_input"] for _, r in runs]),
                    "selector_output_tokens": mean([r["selector_output"] for _, r in runs]),
                    "selector_ms": mean([r["selector_ms"] for _, r in runs]),
                    "failed_runs": sum(r["status"] != 0 for _, r in runs),
                }
            report["budgets"].append(row)
    if a.json:
        print(json.dumps(report, indent=1))
        return
    for row in report["budgets"]:
        print("budget %d" % row["budget"])
        for mode in ("off", "on"):
            m = row[mode]
            line = "  selector %-3s all-needed %.3f  %s" % (
                mode, m["all_needed_recall"], " ".join("%s %.2f" % kv for kv in m["categories"].items()))
            if mode == "on" and m["named_recall"] is not None:
                line += "\n               named: recall %.3f precision %.3f; step %.0f+%.0f tokens, %.0f ms" % (
                    m["named_recall"], m["named_precision"] or 0, m["selector_input_tokens"],
                    m["selector_output_tokens"], m["selector_ms"])
            print(line)


if __name__ == "__main__":
    main()
