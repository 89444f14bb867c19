"""Schemas and safe loading of the harness's inputs (issue 13).

    files.py     read an input file: regular file, size cap, UTF-8 (offset of a bad byte)
    yamlload.py  a YAML loader with a depth limit, an alias budget, duplicate keys refused,
                 and the line of every mapping and key
    models.py    pydantic v2 models of harness.toml and of the case-file format
    problems.py  pydantic's errors as problems with a key path, a message and a fix
    export.py    the JSON Schema of both (``harness schema``)
    frames.py    a case's ``judges:`` frame (how the agent presents an answer): validated by the
                 case loader, rendered by ``harness judges``

Below ``harness.config`` and ``harness.cases``, which validate with it and build their own
objects; it imports nothing of the harness but ``harness.types``.
"""
