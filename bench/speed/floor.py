"""The floor: the benchmark's requests and checks from a plain stdlib HTTP client.

    python bench/speed/floor.py --port P [--concurrency 8] [--one]

Asks the bot's HTTP twin (``bot.py --http``: ``POST /chat``) the same questions the harness and
promptfoo ask (make_cases.py) and checks the same thing: one answer that contains the
question's last word (one HTTP answer is one reply). A keep-alive connection per thread, no
retries, no reports: what any test of these replies costs at least. Exit 0 when all pass; the
last line's digest (sha256 of the sorted question/answer pairs) lets bench_speed.py check that
the harness and promptfoo were given the very same replies.
"""

import argparse
import hashlib
import http.client
import json
import threading
from concurrent.futures import ThreadPoolExecutor

from make_cases import questions

local = threading.local()


answers: dict[str, str] = {}


def check(port: int, question: str) -> bool:
    if not hasattr(local, "conn"):
        local.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    local.conn.request("POST", "/chat", body=json.dumps({"prompt": question}),
                       headers={"Content-Type": "application/json"})
    resp = local.conn.getresponse()
    body = resp.read()
    output = json.loads(body).get("output") if resp.status == 200 else None
    answers[question] = output
    return isinstance(output, str) and question.split()[-1] in output


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--one", action="store_true", help="only the first case")
    args = ap.parse_args()
    asked = [q for _, q in questions()][: 1 if args.one else None]
    with ThreadPoolExecutor(args.concurrency) as pool:
        passed = sum(pool.map(lambda q: check(args.port, q), asked))
    pairs = "".join(f"{q}\t{a}\n" for q, a in sorted(answers.items()))
    print(f"floor: {passed}/{len(asked)} passed, replies {hashlib.sha256(pairs.encode()).hexdigest()[:16]}")
    return 0 if passed == len(asked) else 1


if __name__ == "__main__":
    raise SystemExit(main())
