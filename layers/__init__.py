"""The built-in layers of the suite, installed as ``harness.layers``.

One module a layer, each defining ``LAYER`` (a ``harness.layer.Layer``): robustness,
reasoning, multiturn, cost. The engine finds them through the ``harness.layers``
entry-point group, like any other package's layer, and never names one.
"""
