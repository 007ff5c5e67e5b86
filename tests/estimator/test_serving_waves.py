"""A closed loop of identical requests started together stays in waves (app/estimator/serving/waves.py): each
request's time to first token is its group's prefill step, which grows with the requests in flight.

Published: dstackai/benchmarks at 7f37e6697725e58dd09b9ef190b62ce19f01d45e, Deepseek-R1/raw_data/online_results.csv
(tests/estimator/serving_first_contact_dstack_r1.py [dstack-r1-h200]): vLLM 0.7.4 serving DeepSeek-R1 at TP 8 on
8 x H200, every request 3,200 in and 800 out (`--random-range-ratio 1`, ignore_eos), 500 prompts at C = 4, 8, 16 and
32 in flight: median TTFT 974.9, 1,771.8, 3,388.6 and 7,686.5 ms. Each run's duration is its waves times the median
end-to-end latency (C = 4: 125 x 21.536 s = 2,692 s, the CSV's 2,692.13 s), so the loop never spread out, and vLLM 0.7
ran MLA models without chunked prefill, so each wave's prompts were prefilled in one step (waves.py cites both).

At first contact the estimate read the staggered steady state: 190.9, 194.9, 201.3 and 211.2 ms (-80 to -97 %), a
TTFT 1.11 times as long at 32 in flight as at 4 against the published 7.88. With the waves: 539, 1,018, 1,974 and
3,886 ms (-45, -43, -42, -49 %), 7.2 times.

Tolerances: the growth from 4 to 32 in flight within 20 % of the published 7.88 (the mechanism); each TTFT within 55 %.
Why so wide: the per-prompt prefill itself reads about 45 % fast already at 4 in flight, where each wave is one step of
four prompts (vLLM 0.7.4's MLA prefill: 244 ms a 3,200-token prompt published, about 120 ms estimated), a gap of the
step, not of the waves, left as it is (docs/validation-serving.md lists the rows).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.serving import estimate_serving
from app.estimator.specs import Cluster
from tests.estimator.serving_first_contact_dstack_r1 import DEEPSEEK_V3, H200, _cfg

PUBLISHED_TTFT_MS = {4: 974.8834405, 8: 1771.826166, 16: 3388.584595, 32: 7686.501789}
GROWTH_TOLERANCE = 0.20
TTFT_TOLERANCE = 0.55


def _ttft_ms(concurrency: int, waves: bool = True) -> float:
    cfg = replace(_cfg("vllm", concurrency), waves=waves)
    return estimate_serving(DEEPSEEK_V3, cfg, Cluster(gpu=H200, gpus_per_node=8), tp=8).ttft_ms


def test_ttft_grows_with_the_wave_as_published() -> None:
    published = PUBLISHED_TTFT_MS[32] / PUBLISHED_TTFT_MS[4]
    estimated = _ttft_ms(32) / _ttft_ms(4)
    assert estimated == pytest.approx(published, rel=GROWTH_TOLERANCE)


@pytest.mark.parametrize("concurrency", sorted(PUBLISHED_TTFT_MS))
def test_ttft_in_waves_against_published(concurrency: int) -> None:
    assert _ttft_ms(concurrency) == pytest.approx(PUBLISHED_TTFT_MS[concurrency], rel=TTFT_TOLERANCE)


def test_a_loop_without_waves_keeps_the_staggered_steady_state() -> None:
    # the flag is what changes the answer: the same loop read as staggered replacements keeps its TTFT nearly flat
    assert _ttft_ms(32, waves=False) < 1.5 * _ttft_ms(4, waves=False)
    assert _ttft_ms(32, waves=False) < _ttft_ms(32) / 5
