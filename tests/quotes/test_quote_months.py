"""A quote's months must bill the hours its plan takes on the SKU and quantity quoted: whole 30-day months of the
term, as /recommend billed the option (app/planner/offers.py `billed_months`). Fewer is a 422 on `months` naming
the months, the hours they bill, the hours the job takes and the fewest months that carry it, worded from a code
and its figures in app/text/messages.py (QUOTE_CHECKS) in English and Chinese, on the API and in the wizard's quote
form. Before: a 1,295-hour job quoted for one month (720 h) was issued, total 100,000.00, with no note."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.text import messages
from tests.quotes.test_quote_estimate import _top

CUSTOMER = {"name": "Li Wei", "company": "", "email": "li.wei@example.com"}
HOURS_A_MONTH = 30 * 24
# The review's case: a 70B full fine-tune on 20B tokens; one server is the 8 x H100 option of 1,295 h, 2 months.
SEVENTY_B = {"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune", "tokens": 2e10}


def _two_month_option(client: TestClient) -> dict[str, Any]:
    option = _top(client, {**SEVENTY_B, "constraints": {"max_nodes": 1}})
    assert option["cost"]["months"] == 2 and option["quote"]["months"] == 2
    return option


def _post(client: TestClient, body: dict[str, Any]) -> Any:
    return client.post("/quotes", json={**body, "customer": CUSTOMER})


def test_months_that_bill_fewer_hours_than_the_job_takes_are_refused_naming_both(client: TestClient) -> None:
    option = _two_month_option(client)
    hours = option["performance"]["time_to_train_hours"]
    assert HOURS_A_MONTH < hours <= 2 * HOURS_A_MONTH
    response = _post(client, {**option["quote"], "months": 1})
    assert response.status_code == 422, response.text
    error = next(e for e in response.json()["errors"] if e["field"] == "months")
    assert error["type"] == "months_short"
    params = error["params"]
    assert (params["months"], params["billed_hours"], params["fewest_months"]) == (1, HOURS_A_MONTH, 2)
    assert params["hours"] == pytest.approx(hours, abs=0.01)
    assert f"months 1 bills {HOURS_A_MONTH} h" in error["message"]
    assert f"the plan takes {hours:.1f} h" in error["message"] and error["message"].endswith(
        "quote months 2, the fewest that carry it"
    )


def test_the_options_own_quote_body_is_issued_at_its_job_total(client: TestClient) -> None:
    option = _two_month_option(client)
    response = _post(client, option["quote"])
    assert response.status_code == 201, response.text
    quote = response.json()
    assert quote["months"] == option["cost"]["months"] == 2
    assert Decimal(quote["total"]) == Decimal(option["cost"]["job_total"])


def test_an_annual_term_is_refused_below_the_whole_years_that_carry_the_job(client: TestClient) -> None:
    # 20B tokens on one 8 x H100 server: 1,295 h, 2 months, one year; 10x the tokens needs more than a year
    option = _top(client, {**SEVENTY_B, "tokens": 2e11, "constraints": {"max_nodes": 1, "term": "annual"}})
    hours = option["performance"]["time_to_train_hours"]
    assert 12 * HOURS_A_MONTH < hours <= 24 * HOURS_A_MONTH and option["quote"]["months"] == 24
    error = next(e for e in _post(client, {**option["quote"], "months": 12}).json()["errors"] if e["field"] == "months")
    assert (error["type"], error["params"]["fewest_months"], error["params"]["billed_hours"]) == (
        "months_short",
        24,
        12 * HOURS_A_MONTH,
    )


@pytest.mark.parametrize(("months", "quote_months"), [(1, 12), (18, 24)])
def test_an_annual_term_of_months_not_whole_years_names_the_years_to_quote(
    client: TestClient, months: int, quote_months: int
) -> None:
    """The 1,295-hour job on an annual term: months 1 read "months 1 bills 720 h (1 × 30 days) but the plan takes
    1295.0 h …; quote months 12", as if a month were an annual term's unit; months 18 said whole years, as now."""
    option = _two_month_option(client)
    response = _post(client, {**option["quote"], "term": "annual", "months": months})
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert (error["field"], error["type"]) == ("months", "months_annual")
    assert error["params"] == {"months": months, "quote_months": quote_months}
    assert error["message"] == (
        f"an annual term takes whole years (12, 24, …), got {months}; quote months {quote_months}"
    )
    assert messages.quote_check(error["type"], error["params"], "zh") == (
        f"年付租期须为整年（12、24……个月），而不是 {months} 个月；请报价月数 {quote_months}"
    )


def test_an_annual_term_of_months_not_whole_years_quotes_the_years_the_job_takes(client: TestClient) -> None:
    # 10x the tokens: more than a year on one 8 x H100 server, so months 1 rounds to the 24 that carry the job
    option = _top(client, {**SEVENTY_B, "tokens": 2e11, "constraints": {"max_nodes": 1, "term": "annual"}})
    assert option["quote"]["months"] == 24
    (error,) = _post(client, {**option["quote"], "months": 1}).json()["errors"]
    assert (error["type"], error["params"]) == ("months_annual", {"months": 1, "quote_months": 24})


def test_without_tokens_there_is_no_time_to_check_the_months_against(client: TestClient) -> None:
    option = _top(
        client, {"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune", "constraints": {"max_nodes": 1}}
    )
    assert option["cost"]["months"] is None
    workload = {key: value for key, value in option["quote"]["workload"].items() if key != "tokens"}
    response = _post(client, {**option["quote"], "workload": workload, "months": 1})
    assert response.status_code == 201, response.text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_months_refusal_reads_in_each_language_from_its_code(client: TestClient, lang: str) -> None:
    option = _two_month_option(client)
    error = next(e for e in _post(client, {**option["quote"], "months": 1}).json()["errors"] if e["field"] == "months")
    text = messages.quote_check(error["type"], error["params"], lang)
    hours = f"{error['params']['hours']:.1f}"
    if lang == "en":
        assert "quote months 2" in text and hours in text
    else:
        assert f"月数 1 计费 {HOURS_A_MONTH} 小时" in text and f"需要 {hours} 小时" in text and "请报价月数 2" in text


def test_a_job_beyond_the_longest_quote_says_to_re_plan() -> None:
    params = {"months": 60, "billed_hours": 60 * HOURS_A_MONTH, "hours": 50000.0, "fewest_months": 70}
    params |= {"sku": "h100-80g-sxm-8x", "quantity": 1, "max_months": 60}
    assert "re-plan on more GPUs" in messages.quote_check("months_beyond", params, "en")
    assert "请用更多 GPU 重新规划" in messages.quote_check("months_beyond", params, "zh")


# The wizard's quote form runs the same check (app/web/quote_form.py) and words it in the page's language.
WIZARD = {"preset": "llama-3.1-70b", "task": "full_finetune", "tokens_b": "1000", "option": "1"}


@pytest.mark.parametrize(("lang", "expected"), [("en", "quote months {fewest}"), ("zh", "请报价月数 {fewest}")])
def test_the_wizard_quote_form_shows_the_months_refusal_in_the_page_language(
    client: TestClient, lang: str, expected: str
) -> None:
    option = _top(client, {"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune", "tokens": 1e12})
    fewest = option["cost"]["months"]
    assert fewest >= 2  # a trillion tokens take the top option more than a month
    page = client.get("/quote", params={**WIZARD, "lang": lang}, headers={"accept": "text/html"})
    # the form starts at the months the option bills, which the quote accepts
    assert re.search(rf'name="months"[^>]*value="{fewest}"', page.text), page.text
    # the add-ons as the form checks them (the option's: the fabric joining its servers)
    assert all(f'value="{code}"' in page.text for code in option["quote"]["addons"])
    form = {**WIZARD, "lang": lang, "name": "Li Wei", "email": "li@example.com", "months": "1"}
    form["addons"] = option["quote"]["addons"]
    response = client.post("/quote", data=form, follow_redirects=False)
    assert response.status_code == 422
    error = re.search(r'<p class="field-error" id="err-months">([^<]+)</p>', response.text)
    assert error is not None and expected.format(fewest=fewest) in error.group(1)


def test_a_near_miss_billed_beyond_the_longest_quote_carries_no_quote_body(client: TestClient) -> None:
    """POST /quotes rents at most 60 months: a near miss billed 270 carried a body that came back a 422."""
    body = {**SEVENTY_B, "tokens": 3e12, "constraints": {"max_nodes": 1}}
    near = client.post("/recommend", json=body).json()["near_misses"]
    beyond = [n for n in near if any(m["code"] == "quote_months" for m in n["misses"])]
    assert beyond
    assert all(n["quote"] is None for n in beyond)
