"""Small builders of results.json runs and tonight's samples for the baseline tests."""

from __future__ import annotations

from harness.checks.baseline.samples import CaseSample, TurnSample


def turn_dict(texts, *, tokens_in=500, tokens_out=60, llm=1, tools=("fetch_document",), kinds=None, buttons=None,
              posts=0, state=None):
    texts = [texts] if isinstance(texts, str) else list(texts)
    kinds = kinds or ["text"] * len(texts)
    calls = [{"source": "docs", "name": t} for t in tools]
    calls += [{"source": "gateway", "name": "llm", "input_tokens": tokens_in // max(llm, 1),
               "output_tokens": tokens_out // max(llm, 1)} for _ in range(llm)]
    out = {"replies": [{"text": t, "kind": k, "buttons": list((buttons or {}).get(i, ()))}
                       for i, (t, k) in enumerate(zip(texts, kinds))],
           "calls": calls, "state": state}
    if posts:
        out["posts"] = [{"channel": "whatsapp", "text": "post", "kind": "text"}] * posts
    return out


def case_dict(case_id, turns, *, latency=1000.0, status="pass", others=()):
    d = {"id": case_id, "layer": "reasoning", "channel": "telegram", "status": status, "latency_ms": latency,
         "turns": list(turns)}
    if others:
        d["other_attempts"] = [{"status": "pass", "latency_ms": lat, "turns": list(ts)} for ts, lat in others]
    return d


def run_dict(run_id, cases, *, name="docbot", basis=None):
    return {"schema": "harness.results/1", "run_id": run_id, "target": {"name": name},
            "summary": {"verdict": "pass", "anomaly_basis": basis or {"concurrency": 8, "config": "sha256:abc"}},
            "cases": list(cases)}


def tonight(texts, *, tokens_in=520, tokens_out=60, llm=1, tools=("fetch_document",), kinds=None, buttons=None,
            posts=0, state=None, latency=1100.0, order=0.0):
    texts = (texts,) if isinstance(texts, str) else tuple(texts)
    kinds = tuple(kinds or ("text",) * len(texts))
    turn = TurnSample(texts=texts, kinds=kinds, buttons=tuple(tuple((buttons or {}).get(i, ())) for i in
                                                               range(len(texts))),
                      parse_modes=("",) * len(texts), posts=posts, tools=tuple(tools), llm_calls=llm,
                      tokens_in=tokens_in, tokens_out=tokens_out, state=state)
    return CaseSample("tonight", (turn,), latency, order)


SUMMARY = ("The study of 1,200 adults in Oslo found that the drug may reduce pain by 12% within 6 weeks. "
           "Results were not significant for children. Costs rose to $3.5 million in 2023, led by Dr Ingrid Berg.")
#: The same facts, paraphrased the way docbot's noise mode does (synonyms, a lead-in, order kept).
PARAPHRASE = ("In short, the research of 1200 adults in Oslo reported that the drug may lower pain by 12% within "
              "6 weeks. Findings were not notable for children. Costs rose to $3.5 million in 2023, led by Dr "
              "Ingrid Berg.")
