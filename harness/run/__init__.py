"""The run: one suite of cases driven against the agent, from update to verdict.

``runner`` brings the sandbox and the target up and runs the cases; ``driver`` (with
``delivery`` and ``driver_faults``) plays the user's side of the channel; ``aggregate``
and ``soft`` turn evidence into verdicts; ``perf``, ``cost``, ``budget`` and ``anomaly``
measure what each case cost and guard the budget.
"""
