"""``harness judges``: mutation testing of the judges.

For every reasoning case with a golden answer, wrong answers are derived from each golden
answer by kind (``mutate``), presented the way the agent presents an answer (the case's
``judges:`` frame, ``harness.schema.frames``), and judged by the case's own text checks, similarity and
critic exactly as a run would (``evaluate``). A mutation is caught when any of those checks
fails on it. Results are cached by content hash (``cache``) and written as judges.json and
judges.html (``report``); ``thresholds`` proposes each case's similarity threshold from its
goldens' and its mutations' scores.

Entry points: ``harness.judges.run.run_judges`` (the command), ``harness.judges.report.
latest_figures`` (the newest judges.json, for a run's report) and ``harness.judges.warnings.
mutation_warnings`` (for ``harness check``).
"""
