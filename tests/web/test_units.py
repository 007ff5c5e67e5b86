"""The web layer's pure parts: the message catalog, formatting, form mapping, chart geometry."""

from __future__ import annotations

import re
import string

import pytest

from app.planner.schemas import MemoryOut
from app.text.i18n import EN, REGIONS, ZH, Translator
from app.text.messages import WARNINGS
from app.web import forms, serve
from app.web.charts import BAR_WIDTH, memory_bar

FIELD = string.Formatter()


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in FIELD.parse(text) if name}


def test_both_languages_define_the_same_keys_and_placeholders() -> None:
    assert set(EN) == set(ZH)
    assert {k: _placeholders(v) for k, v in EN.items()} == {k: _placeholders(v) for k, v in ZH.items()}
    assert set(WARNINGS["en"]) == set(WARNINGS["zh"])
    assert set(REGIONS["en"]) == set(REGIONS["zh"])


def test_every_warning_code_the_planner_emits_is_translated() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "app"
    source = "".join(p.read_text() for d in ("estimator", "planner") for p in (root / d).glob("*.py"))
    codes = set(re.findall(r'Warning_\(\s*"([a-z_0-9]+)"', source))
    assert codes and codes <= set(WARNINGS["zh"])


@pytest.mark.parametrize(("lang", "expected"), [("en", "¥2,800.00"), ("zh", "¥2,800.00")])
def test_money_in_yuan(lang: str, expected: str) -> None:
    assert Translator(lang).money("2800.00", "CNY") == expected
    assert Translator(lang).money("1600000.00", "CNY") == "¥1,600,000.00"


def test_short_money_and_durations() -> None:
    en, zh = Translator("en"), Translator("zh")
    assert (en.money_short(30_000, "CNY"), en.money_short(1_600_000, "CNY")) == ("¥30k", "¥1.6M")
    assert (zh.money_short(30_000, "CNY"), zh.money_short(1_600_000, "CNY")) == ("¥3万", "¥160万")
    assert (en.duration(18.49), en.duration(100.35)) == ("18 h 29 min", "4.2 days")
    # A short job in hours and minutes, never "0 h" (a 100M-token LoRA on 8 H100s takes 17 minutes).
    assert (en.duration(0.2833), en.duration(0.01), en.duration(2.0)) == ("17 min", "1 min", "2 h")
    assert en.duration(None) == "give tokens to train"
    assert (zh.duration(18.49), zh.duration(100.35)) == ("18 小时 29 分钟", "4.2 天")
    assert (zh.duration(0.2833), en.axis_hours(0.1), en.axis_hours(2)) == ("17 分钟", "6 min", "2 h")
    assert (en.plural("cards", 1, n=1), en.plural("cards", 4, n=4), zh.plural("cards", 1, n=1)) == (
        "1 card",
        "4 cards",
        "1 张卡",
    )


def _form(**values: str) -> forms.WizardForm:
    return forms.read_form(values, list(values.items()))


def test_the_form_becomes_the_recommend_body() -> None:
    t = Translator("en")
    body = forms.build_body(
        _form(
            preset="llama-2-7b",
            task="qlora",
            lora_rank="64",
            dataset_tokens_b="2",
            epochs="3",
            budget="50,000",
            deadline_days="7",
            term="annual",
            regions="shenzhen",
        ),
        t,
    )
    assert body == {
        "model": {"preset": "llama-2-7b"},
        "task": "qlora",
        "seq_len": 2048,
        "precision": "bf16",
        "optimizer": "adamw",
        "lora": {"rank": 64},
        "tokens": 6e9,
        "constraints": {
            "term": "annual",
            "objective": "balanced",
            "max_monthly_budget": "50000",
            "deadline_days": 7.0,
            "regions": ["shenzhen"],
        },
    }


def test_form_errors_land_on_their_fields() -> None:
    t = Translator("en")
    form = _form(source="config", hf_config="{not json", seq_len="2048.5", budget="-5")
    assert forms.parse_wizard(form, t) is None
    assert form.errors == {
        "hf_config": ["This is not valid JSON: Expecting property name enclosed in double quotes (line 1, column 2)"],
        "seq_len": ["Enter a whole number."],
        "budget": ["Must be greater than 0."],
    }
    zh_form = _form(source="params", params_b="20000")
    assert forms.parse_wizard(zh_form, Translator("zh")) is None
    assert zh_form.errors == {"params_b": ["不能大于 10,000。"]}


def test_api_locations_map_to_form_fields() -> None:
    assert forms.field_for("constraints.max_monthly_budget") == "budget"
    assert forms.field_for("model.hf_config.num_hidden_layers") == "hf_config"
    assert forms.field_for("lora.rank") == "lora_rank"
    assert forms.field_for("plan.tp") == "form"


def test_curl_command_quotes_the_body_for_a_shell() -> None:
    cmd = forms.curl_command("http://127.0.0.1:8000/", {"model": {"name": "it's"}})
    assert cmd == (
        "curl -sS -X POST 'http://127.0.0.1:8000/recommend' \\\n  -H 'Content-Type: application/json' "
        '\\\n  -d \'{"model":{"name":"it\'\\\'\'s"}}\''
    )


def test_memory_bar_scales_to_the_larger_of_capacity_and_total() -> None:
    fits = memory_bar(
        MemoryOut(
            per_gpu_gib={
                "weights": 12.7,
                "gradients": 0.15,
                "optimizer": 0.3,
                "activations": 22.99,
                "kv_cache": 0.0,
                "other": 1.4,
                "total": 37.54,
            },
            capacity_gib=39.0,
            fits=True,
            host_ram_gib=0,
        )
    )
    assert [s.part for s in fits.segments] == ["weights", "gradients", "optimizer", "activations", "other"]
    assert fits.capacity_x == BAR_WIDTH
    assert sum(s.width for s in fits.segments) == pytest.approx(37.54 / 39.0 * BAR_WIDTH, abs=0.05)
    over = memory_bar(
        MemoryOut(per_gpu_gib={"weights": 120.0, "total": 120.0}, capacity_gib=60.0, fits=False, host_ram_gib=0)
    )
    assert (over.segments[0].width, over.capacity_x, over.fits) == (BAR_WIDTH, BAR_WIDTH / 2, False)


def test_rejection_reasons_in_chinese_with_the_english_as_fallback() -> None:
    """Rejections are worded from the planner's code and parameters (no English parsed back); a code
    the catalog does not word (the serving search's `kernels`) keeps the API's English."""
    zh = Translator("zh")
    where = {"gpus": 16, "gpu_name": "NVIDIA H100 80GB SXM", "nodes": 2}
    assert zh.rejection("gpu_memory", where, "") == "在 16 × NVIDIA H100 80GB SXM，共 2 个节点 上没有可行的并行方案"
    assert (
        zh.rejection("kernels", {}, "a reason the planner words differently")
        == "a reason the planner words differently"
    )
    region = {"regions": ["shenzhen"], "requested": ["singapore"]}
    assert Translator("en").rejection("region", region, "") == "offered in shenzhen, not in singapore"
    # the serving search's rejections carry a code without parameters: worded when the code needs none
    assert zh.rejection("time_budget", {}, "not searched: the time budget ran out") == "未搜索：时间预算已用完"
    assert zh.rejection("exchange_rate", {}, "priced in USD, …") == "priced in USD, …"


def test_the_front_stops_where_more_money_buys_no_meaningful_time() -> None:
    """The front a 100M-token Llama 3 8B LoRA had before billing by whole months (issue: "runs to
    128 H100s at ¥1,600,000 and '0 h'"): GPUs, cost, hours as the planner answered them."""
    from app.planner.schemas import ParetoPointOut
    from app.web.charts import useful_front

    seen = [
        ("a100-40g-pcie-card", 1, "2800.00", 5.523),
        ("a100-40g-pcie-card", 2, "5600.00", 2.762),
        ("a100-40g-pcie-card", 4, "11200.00", 1.362),
        ("a100-80g-sxm-8x", 8, "30000.00", 0.624),
        ("h100-80g-sxm-8x", 8, "100000.00", 0.283),
        ("h100-80g-sxm-8x", 16, "200000.00", 0.142),
        ("h100-80g-sxm-8x", 128, "1600000.00", 0.019),
    ]
    pareto = [ParetoPointOut(sku=s, total_gpus=g, cost=c, hours=h) for s, g, c, h in reversed(seen)]
    kept, left_out = useful_front(pareto)
    # 1 → 2 → 4 cards → 8 A100s each save over half an hour; 8 H100s would save 20 minutes for ¥70,000 more.
    assert [(p.sku, p.total_gpus) for p in kept] == [(s, g) for s, g, _, _ in seen[:4]]
    assert left_out == 3


def test_memory_bar_marks_the_limit_the_gate_checks() -> None:
    """A plan fits within the capacity less the 5 % headroom: the bar and the heading read the limit (75.05 GiB on
    an 80 GB A100), not the 79 GiB capacity, beside which a plan at 76 GiB would have looked like it fits."""
    bar = memory_bar(
        MemoryOut(
            per_gpu_gib={"weights": 70.0, "total": 70.0}, capacity_gib=79.0, limit_gib=75.05, fits=True, host_ram_gib=0
        )
    )
    assert bar.limit_gib == 75.05
    assert bar.limit_x == pytest.approx(75.05 / 79.0 * BAR_WIDTH, abs=0.01) and bar.limit_x < bar.capacity_x
    unset = memory_bar(MemoryOut(per_gpu_gib={"total": 10.0}, capacity_gib=79.0, fits=True, host_ram_gib=0))
    assert unset.limit_gib == 79.0


@pytest.mark.parametrize(
    ("raw", "integer", "expected"),
    [
        ("2048", True, (2048, None)),
        ("2.5", False, (2.5, None)),
        ("2048.5", True, (None, "fractional")),
        ("abc", False, (None, "unparsable")),
        ("inf", False, (None, "infinite")),
        ("nan", True, (None, "infinite")),
    ],
)
def test_a_number_field_reads_its_value_or_why_not(raw: str, integer: bool, expected: tuple[object, object]) -> None:
    assert forms.parse_number(raw, integer=integer) == expected


def test_the_wizard_and_serving_forms_word_a_bad_number_as_before() -> None:
    t = Translator("en")
    wizard = _form(seq_len="abc", epochs="inf", lora_rank="8.5")
    forms.parse_wizard(wizard, t)
    assert wizard.errors["seq_len"] == ["Enter a whole number."]
    assert wizard.errors["epochs"] == ["Enter a number."]
    assert wizard.errors["lora_rank"] == ["Enter a whole number."]
    serving = serve.read_form({"input_tokens": "abc", "output_tokens": "8.5", "requests_per_s": "nan"})
    numbers = {
        name: serve._number(serving, name, t, integer=name != "requests_per_s")
        for name in ("input_tokens", "output_tokens", "requests_per_s")
    }
    assert numbers["input_tokens"] is None and numbers["output_tokens"] is None and numbers["requests_per_s"] is None
    assert serving.errors["input_tokens"] == [t("serve_err_number")]
    assert serving.errors["output_tokens"] == [t("serve_err_integer")]
    assert serving.errors["requests_per_s"] == [t("serve_err_number")]
