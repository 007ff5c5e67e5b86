"""Every training page and the training quote, printable and PDF, are complete in Chinese: the wizard's home page,
results and quote form for the newcomer's scenarios (LoRA 7B, 70B pretraining, DeepSeek-V3 full fine-tune, 70B QLoRA,
inference, a request with near misses) and the issued quote's printable page and PDF leave no run of two English
words once the catalog's names, the models' names, the customer's own words and identifiers are set aside
(the detector and its names: tests/web/test_serve_chinese.py)."""

from __future__ import annotations

import html
import io
import re

import pytest
from fastapi.testclient import TestClient
from pypdf import PdfReader
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.catalog.models import SkuAddon
from tests.web.test_serve_chinese import allowed_names, english_runs

HTML = {"accept": "text/html,application/xhtml+xml"}
SCENARIOS = {
    "lora 7b": "preset=llama-2-7b&task=lora&tokens_b=0.1",
    "70b pretrain": "preset=llama-3.1-70b&task=pretrain&tokens_b=50",
    "deepseek-v3 full fine-tune": "preset=deepseek-v3&task=full_finetune&tokens_b=1",
    "70b qlora": "preset=llama-3.1-70b&task=qlora&tokens_b=0.5",
    "inference": "preset=llama-3.1-8b&task=inference",
    # a deadline and a budget few SKUs meet: the near misses are worded too
    "near misses": "preset=llama-3.1-70b&task=full_finetune&tokens_b=5&deadline_days=2&budget=100000",
}
# Proper names the training pages cite (the customer's own words; the training stacks the speed is calibrated on) and
# the currencies' ISO 4217 codes.
TRAINING_NAMES = ("Shenzhen Compute", "Megatron-LM", "Megatron-Bridge", "HF Trainer", "fms-acceleration", "CNY", "USD")


def _names(client: TestClient, db: Session) -> list[str]:
    """What may stay in English: the serving test's names, the catalog's add-on names, disks and regions, and these."""
    skus = client.get("/catalog/skus").json()
    catalog = [*db.scalars(select(SkuAddon.name)), *(sku["host_nvme"] for sku in skus)]
    catalog += [region for sku in skus for region in sku["regions"]]
    return sorted({*allowed_names(client), *filter(None, catalog), *TRAINING_NAMES}, key=len, reverse=True)


def pdf_runs(pdf_text: str, names: list[str]) -> list[str]:
    """English runs of a PDF's text: a name is set aside even where the PDF wraps or kerns it (pypdf reads a line
    break, or a space inside a word, where the page drew a gap)."""
    for name in names:
        pattern = r"\s*".join(re.escape(ch) for ch in name.replace(" ", ""))
        pdf_text = re.sub(pattern, " ", pdf_text)
    return english_runs("<br>".join(html.escape(line) for line in pdf_text.splitlines()), [])


def _quote_link(results_html: str) -> str | None:
    link = re.search(r'href="(/quote\?[^"]+option=1)"', results_html)
    return html.unescape(link.group(1)) if link else None


def test_the_pdf_detector_sets_aside_a_wrapped_name_and_finds_english() -> None:
    text = "配置 1 × A100 40G custom server, rented by\nthe card\nPyT orch 已预装，see the notes"
    assert pdf_runs(text, ["A100 40G custom server, rented by the card", "PyTorch"]) == ["see the notes"]


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_training_pages_are_chinese(client: TestClient, db: Session, scenario: str) -> None:
    names = _names(client, db)
    query = f"{SCENARIOS[scenario]}&lang=zh"
    pages = {"form": client.get(f"/?{query}", headers=HTML), "results": client.get(f"/results?{query}", headers=HTML)}
    assert pages["results"].status_code == 200, pages["results"].text[:2000]
    if scenario == "near misses":  # the scenario words its near misses and the SKUs rejected
        assert 'id="near-title"' in pages["results"].text and 'id="rejected-title"' in pages["results"].text
    link = _quote_link(pages["results"].text)
    if link:
        pages["quote form"] = client.get(link, headers=HTML)
        assert pages["quote form"].status_code == 200
    left = {name: english_runs(page.text, names) for name, page in pages.items()}
    assert not any(left.values()), left


def _issue(client: TestClient, query: str) -> str:
    """The top option quoted from its card as a customer does: the printable page's address."""
    results = client.get(f"/results?{query}&lang=zh", headers=HTML)
    link = _quote_link(results.text)
    assert link, results.text[:2000]
    form = client.get(link, headers=HTML)
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.text))
    addons = re.findall(r'name="addons" value="([^"]+)"[^>]* checked>', form.text)  # the fabric a plan joins
    fields = {"name": "Li Wei", "company": "Shenzhen Compute", "email": "li.wei@example.com", "months": ""}
    data = {**hidden, **fields, "addons": addons}
    posted = client.post("/quote", data=data, headers=HTML, follow_redirects=False)
    assert posted.status_code == 303, posted.text[:3000]
    return str(posted.headers["location"])


@pytest.mark.parametrize("scenario", ["lora 7b", "70b pretrain", "70b qlora"])
def test_the_training_quote_is_chinese_printed_and_as_pdf(client: TestClient, db: Session, scenario: str) -> None:
    names = _names(client, db)
    location = _issue(client, SCENARIOS[scenario])
    assert location.endswith("lang=zh"), location
    printed = client.get(location, headers=HTML)
    assert printed.status_code == 200
    pdf_link = re.search(r'href="([^"]+\.pdf\?lang=zh)"', printed.text)
    assert pdf_link, printed.text[:2000]
    pdf = client.get(html.unescape(pdf_link.group(1)))
    assert (pdf.status_code, pdf.headers["content-type"]) == (200, "application/pdf")
    reader = PdfReader(io.BytesIO(pdf.content))
    pdf_text = "\n".join(page.extract_text() for page in reader.pages)
    left = {"printed": english_runs(printed.text, names), "pdf": pdf_runs(pdf_text, names)}
    assert not any(left.values()), left
    assert "价格 #" in pdf_text and "price #" not in pdf_text  # the catalog's versions, a single English word before


FIELD_ERRORS = {  # (query, field, the catalog's words for it in en and zh)
    "too many digits": (
        "budget=12345678901234567",
        "budget",
        "Use at most 16 digits in all.",
        "总位数不能超过 16 位。",
    ),
    "exponent": ("budget=1e5", "budget", "Write the amount in digits with a decimal point", "请用数字和小数点填写金额"),
    "too many places": (
        "total_budget=0.001",
        "total_budget",
        "Use at most 2 decimal places.",
        "小数位数不能超过 2 位。",
    ),
    "start out of range": ("start_date=9999-12-31", "start_date", "must be from today (", "须在今天（"),
}


@pytest.mark.parametrize("case", sorted(FIELD_ERRORS))
def test_wizard_field_errors_are_worded_by_the_catalog(client: TestClient, db: Session, case: str) -> None:
    query, field, english, chinese = FIELD_ERRORS[case]
    for lang, words in (("en", english), ("zh", chinese)):
        page = client.get(f"/results?preset=llama-3.1-8b&task=lora&{query}&lang={lang}", headers=HTML)
        error = re.search(rf'id="err-{field}"[^>]*>([^<]+)<', page.text)
        assert error, (lang, page.status_code, page.text[:3000])
        assert html.unescape(error.group(1)).strip().startswith(words), (lang, error.group(1))
    page = client.get(f"/results?preset=llama-3.1-8b&task=lora&{query}&lang=zh", headers=HTML)
    assert not english_runs(page.text, _names(client, db)), english_runs(page.text, _names(client, db))


def test_the_printed_quote_and_its_pdf_follow_accept_language(client: TestClient) -> None:
    """As every page: `?lang` wins, else Accept-Language (the API's links.print and links.pdf carry no lang)."""
    path = _issue(client, SCENARIOS["lora 7b"]).split("?")[0]
    chinese = {**HTML, "accept-language": "zh-CN,zh;q=0.9,en;q=0.5"}
    printed = client.get(path, headers=chinese)
    assert printed.status_code == 200 and '<html lang="zh-CN">' in printed.text and "报价" in printed.text
    assert '<html lang="en">' in client.get(f"{path}?lang=en", headers=chinese).text
    assert '<html lang="en">' in client.get(path, headers=HTML).text
    pdf = client.get(f"{path.removesuffix('/print')}.pdf", headers={"accept-language": "zh-CN"})
    assert pdf.status_code == 200 and pdf.headers["vary"] == "Accept-Language"
    assert "价格 #" in "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.content)).pages)
