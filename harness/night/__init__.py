"""The night's operations: everything around a run that makes it a nightly record.

``runflow`` (lock, resume, shards, manifest, upload) wraps one ``harness run``;
``storage`` keeps runs in S3-compatible object storage; ``history``, ``diff``,
``baseline``, ``quarantine`` and ``context`` compare tonight with the nights before;
``alerts`` tells people; ``schedule`` fires the cycle; ``calibrate`` proves the suite
catches the reference agent's seeded regressions.
"""
