"""What the API answers as codes with parameters reads in Chinese with no English sentence left, through the one
renderer the pages use (app/text/messages.py, app/text/note_words.py): /estimate's warnings and assumptions (its
cluster, its plan, the estimator's notes) for the requests of the API's examples and the hardware a request leaves out
(the serving quote, printed and as PDF: tests/web/test_serve_chinese.py). The detector and the names it sets aside
(catalog data, models, the customer's own words, identifiers) are tests/web/test_serve_chinese.py's."""

from __future__ import annotations

import html
import io
import re
from typing import Any

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient
from pypdf import PdfReader
from sqlalchemy.orm import Session

from app.api.examples import ESTIMATE
from app.delivery.error_pages import WebRoute
from app.text import messages
from tests.web.test_serve_chinese import allowed_names, english_runs
from tests.web.test_training_chinese import TRAINING_NAMES

HTML = {"accept": "text/html,application/xhtml+xml"}
LLAMA_70B = {"preset": "llama-3.1-70b"}
ESTIMATES: dict[str, dict[str, Any]] = {
    **{name: dict(example["value"]) for name, example in ESTIMATE.items()},
    # the cluster's sentences: one GPU, whole usual servers with their fabric and RAM, a fabric by name, SKUs
    "one gpu": {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 1e8, "hardware": {"gpu": "h100-80g-sxm"}},
    "usual servers": {
        "model": LLAMA_70B,
        "task": "full_finetune",
        "tokens": 1e9,
        "hardware": {"gpu": "a100-80g-sxm", "nodes": 2},
    },
    "named fabric": {
        "model": LLAMA_70B,
        "task": "full_finetune",
        "tokens": 1e9,
        "hardware": {"gpu": "h100-80g-sxm", "nodes": 2, "inter_node_fabric": "roce-200"},
    },
    "sku servers": {
        "model": LLAMA_70B,
        "task": "full_finetune",
        "tokens": 1e9,
        "hardware": {"sku": "h100-80g-sxm-8x", "nodes": 2},
    },
    "sku over tcp": {
        "model": LLAMA_70B,
        "task": "full_finetune",
        "tokens": 1e9,
        "hardware": {"sku": "a100-80g-sxm-8x", "nodes": 2},
    },
    # warnings: a stated plan with a pipeline, tensor parallel across servers, offload, fp8 on an A100
    "stated plan": {
        "model": LLAMA_70B,
        "task": "full_finetune",
        "tokens": 1e9,
        "precision": "fp8",
        "hardware": {"gpu": "a100-80g-sxm", "nodes": 2},
        "plan": {"tp": 16, "pp": 1, "dp": 1, "zero_stage": 3, "offload": "optimizer", "global_batch": 100},
    },
    "pretrain a released model": {
        "model": LLAMA_70B,
        "task": "pretrain",
        "tokens": 1e10,
        "hardware": {"gpu": "h100-80g-sxm", "nodes": 4},
    },
}


@pytest.mark.parametrize("name", sorted(ESTIMATES))
def test_an_estimates_words_read_in_chinese(client: TestClient, name: str) -> None:
    response = client.post("/estimate", json=ESTIMATES[name])
    assert response.status_code == 200, response.text[:2000]
    body = response.json()
    words = [messages.warning(w["code"], w["params"], "zh") for w in body["warnings"]]
    assert len(body["assumption_codes"]) == len(body["assumptions"])
    words += [messages.note(a["code"], a["params"], "zh") for a in body["assumption_codes"]]
    # the English the API returns is the same renderer's
    assert [messages.note(a["code"], a["params"]) for a in body["assumption_codes"]] == body["assumptions"]
    names = [*allowed_names(client), *TRAINING_NAMES, "roce-200", "ib-ndr-400", "ib-hdr-200", "torchtitan"]
    left = {text: runs for text in words if (runs := english_runs(f"<p>{html.escape(text)}</p>", names))}
    assert not left, left


def test_the_cluster_sentences_are_codes_in_both_languages(client: TestClient) -> None:
    body = client.post("/estimate", json=ESTIMATES["usual servers"]).json()
    codes = [a["code"] for a in body["assumption_codes"]]
    assert {"fabric_usual_rail", "host_ram_usual", "hardware_usual_server"} <= set(codes)
    fabric = next(a for a in body["assumption_codes"] if a["code"] == "fabric_usual_rail")
    assert messages.note("fabric_usual_rail", fabric["params"]) in body["assumptions"]
    assert "每块 GPU 一张网卡" in messages.note("fabric_usual_rail", fabric["params"], "zh")


# --- what the page-level tests (test_training_chinese.py, test_serve_chinese.py) do not reach: refusals, the accept
# page, a form with errors, an error page ------------------------------------------------------------------------

LORA_7B = "preset=llama-2-7b&task=lora&tokens_b=0.1"


def _quote_form(client: TestClient, query: str) -> dict[str, Any]:
    from tests.web.test_training_chinese import _quote_link

    results = client.get(f"/results?{query}&lang=zh", headers=HTML)
    link = _quote_link(results.text)
    assert link, results.text[:2000]
    form = client.get(link, headers=HTML)
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.text))
    return {**hidden, "name": "Li Wei", "company": "", "email": "li.wei@example.com", "months": ""}


@pytest.mark.parametrize(
    ("addons", "words"),
    [(["infiniband-400g"], "也没有其他可选附加项"), (["no-such-addon", "no-such-addon"], "每个附加项只能列出一次")],
)
def test_a_refused_quote_reads_in_chinese_on_its_form(client: TestClient, addons: list[str], words: str) -> None:
    """A quote the SKU refuses comes back on the form, worded from its code (before: the API's English)."""
    posted = client.post("/quote", data={**_quote_form(client, LORA_7B), "addons": addons}, headers=HTML)
    assert posted.status_code == 422, posted.text[:2000]
    assert 'class="error-summary"' in posted.text
    assert words in posted.text
    assert english_runs(posted.text, [*allowed_names(client), "infiniband-400g", "no-such-addon"]) == []


def test_the_accept_page_and_a_wizard_with_errors_read_in_chinese(client: TestClient) -> None:
    names = allowed_names(client)
    posted = client.post("/quote", data=_quote_form(client, LORA_7B), headers=HTML, follow_redirects=False)
    assert posted.status_code == 303, posted.text[:2000]
    public_id = re.search(r"/quotes/([\w-]{32})", posted.headers["location"])
    assert public_id, posted.headers["location"]
    pages = {
        "accept": client.get(f"/quote/{public_id.group(1)}/accept?lang=zh", headers={**HTML, "accept-language": "zh"}),
        "wizard errors": client.get("/results?preset=llama-2-7b&task=lora&tokens_b=abc&lang=zh", headers=HTML),
        "not found": client.get("/quote/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/accept?lang=zh", headers=HTML),
        # a quote's printable page and PDF links, opened in a browser (before: the API's English problem+json)
        "print not found": client.get("/quotes/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/print?lang=zh", headers=HTML),
        "pdf not found": client.get("/quotes/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.pdf?lang=zh", headers=HTML),
    }
    assert [page.status_code for page in pages.values()] == [200, 422, 404, 404, 404]
    assert all('<html lang="zh-CN">' in pages[name].text for name in ("print not found", "pdf not found"))
    left = {name: english_runs(page.text, names) for name, page in pages.items()}
    assert not any(left.values()), left


# --- the seller block: worded in both languages from one catalog (app/quotes/printing.py SELLER), frozen with the
# quote in both, printed in the page's language ------------------------------------------------------------------

SELLER_ZH = (
    "GPU 服务器租赁（gpu-sizer）",
    "深圳 · 新加坡 · 洛杉矶",
    "独享整机；预装 CUDA 12、PyTorch、DeepSpeed 和 Megatron",
)
SELLER_EN = ("GPU server rental", "Shenzhen · Singapore · Los Angeles", "Dedicated machines", "10-minute hardware")


def _api_quote(client: TestClient) -> str:
    recommended = client.post("/recommend", json={"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 1e8})
    option = recommended.json()["options"][0]
    customer = {"name": "Li Wei", "company": "", "email": "li.wei@example.com"}
    issued = client.post("/quotes", json={**option["quote"], "customer": customer})
    assert issued.status_code == 201, issued.text[:2000]
    return str(issued.json()["id"])


def _seller_section(page: str) -> str:
    found = re.search(r"<h2>供应方</h2>(.*?)</div>", page, flags=re.S) or re.search(
        r"<h2>Seller</h2>(.*?)</div>", page, flags=re.S
    )
    assert found, page[:3000]
    return html.unescape(found.group(1))


def test_the_chinese_quote_prints_the_seller_block_in_chinese(client: TestClient) -> None:
    """Before: "供应方 GPU server rental (gpu-sizer) Shenzhen · Singapore · Los Angeles Dedicated machines; …" on the
    Chinese page and PDF, from one English constant (and this suite set the block aside as catalog data)."""
    public_id = _api_quote(client)
    zh = _seller_section(client.get(f"/quotes/{public_id}/print?lang=zh").text)
    assert all(words in zh for words in SELLER_ZH), zh
    assert english_runs(zh, ["gpu-sizer"]) == [] and not any(words in zh for words in SELLER_EN), zh
    en = _seller_section(client.get(f"/quotes/{public_id}/print?lang=en").text)
    assert all(words in en for words in SELLER_EN), en
    pdf = client.get(f"/quotes/{public_id}.pdf?lang=zh")
    assert pdf.status_code == 200
    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.content)).pages)
    assert "深圳" in text and "Singapore" not in text and "Dedicated" not in text


def test_the_seller_block_stays_as_the_quote_froze_it(
    client: TestClient, db: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A quote keeps the words it was issued with in both languages when the catalog changes later; one issued
    before (its snapshot froze the English block alone) prints in Chinese where that English is the catalog's."""
    from app.quotes import printing
    from app.quotes.service import get_quote_row

    public_id = _api_quote(client)
    row = get_quote_row(db, public_id=public_id)
    assert row.snapshot["seller"] == printing.SELLER
    changed = {lang: {**words, "address": "Hong Kong"} for lang, words in printing.SELLER.items()}
    monkeypatch.setattr(printing, "SELLER", changed)
    assert "深圳 · 新加坡 · 洛杉矶" in _seller_section(client.get(f"/quotes/{public_id}/print?lang=zh").text)
    monkeypatch.undo()
    row.snapshot = {**row.snapshot, "seller": dict(printing.SELLER["en"])}  # as quotes were frozen before
    db.flush()
    zh = _seller_section(client.get(f"/quotes/{public_id}/print?lang=zh").text)
    assert all(words in zh for words in SELLER_ZH), zh
    row.snapshot = {**row.snapshot, "seller": {**printing.SELLER["en"], "address": "Hong Kong"}}
    db.flush()
    assert "Hong Kong" in _seller_section(client.get(f"/quotes/{public_id}/print?lang=zh").text)  # as it froze


def test_the_error_pages_read_in_chinese(client: TestClient) -> None:
    """The pages a customer meets when something fails, in Chinese: a page's unexpected error (500) and a status
    without a page of its own (405: the error page), beside the 404 above."""
    broken = APIRouter(route_class=WebRoute)

    @broken.get("/broken-page")
    def _boom() -> None:
        raise RuntimeError("boom")

    client.app.include_router(broken)
    pages = {
        "500": client.get("/broken-page?lang=zh", headers={**HTML, "x-request-id": "req-123"}),
        "405": client.put("/serve?lang=zh", headers=HTML),
    }
    assert {name: page.status_code for name, page in pages.items()} == {"500": 500, "405": 405}
    assert all('<html lang="zh-CN">' in page.text for page in pages.values())
    left = {name: english_runs(page.text, allowed_names(client)) for name, page in pages.items()}
    assert not any(left.values()), left
