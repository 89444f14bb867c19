"""The run-level latency trend: a leak fails the late cases; noise and a flat slowdown do not."""

from __future__ import annotations

import random

import pytest

from harness.checks.baseline.trend import Point, latency_trend, spearman


def _points(excess):
    return [Point(f"c{i:02d}", float(i), 1000.0 + e, 1000.0) for i, e in enumerate(excess)]


def test_a_leak_fails_the_late_cases():
    trend = latency_trend(_points([i * 100.0 for i in range(24)]))  # every case 100 ms slower than the one before
    assert trend.checked and trend.leak and trend.rho == pytest.approx(1.0)
    assert trend.affected and all(int(cid[1:]) >= 16 for cid in trend.affected)
    ev = next(iter(trend.affected.values()))
    assert ev.check == "baseline.latency_trend" and ev.passed is False and "rho" in ev.reason


@pytest.mark.parametrize("excess", [
    [random.Random(7).uniform(-300, 1200) for _ in range(30)],  # noisy nights: slow spells anywhere
    [800.0] * 24,                                               # a busy machine: everything slower alike
    [i * 10.0 for i in range(24)],                              # a trend, but 230 ms over the run: too small
    [(24 - i) * 100.0 for i in range(24)],                      # faster as the run goes on
])
def test_no_leak(excess):
    trend = latency_trend(_points(excess))
    assert trend.checked and not trend.leak and trend.affected == {}


def test_too_few_cases_are_not_checked():
    trend = latency_trend(_points([i * 500.0 for i in range(5)]))
    assert not trend.checked and "12 needed" in trend.note and not trend.affected


def test_spearman():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3], [5, 5, 5]) is None
