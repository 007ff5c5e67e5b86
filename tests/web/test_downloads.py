"""What a browser fetches beside the pages: a favicon (no console 404 on every page), downloads
named after the model, task and option, and launch files that say which model and task they run."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.text import messages

LORA_8B = "preset=llama-3-8b&task=lora&tokens_b=0.1"


def test_the_favicon_is_served_and_linked(client: TestClient) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/x-icon"
    assert response.content[:4] == b"\x00\x00\x01\x00"  # an ICO header
    assert '<link rel="icon" href="/favicon.ico">' in client.get("/").text


def test_the_csv_is_named_after_the_model_and_task(client: TestClient) -> None:
    response = client.get(f"/results.csv?{LORA_8B}")
    assert response.headers["content-disposition"] == 'attachment; filename="gpu-sizer-llama-3-8b-lora.csv"'


def test_a_launch_file_names_and_carries_its_model_task_and_option(client: TestClient) -> None:
    # 1B tokens: one card takes 2.5 days, so two cards buy usable time and are option 2
    response = client.get("/results/launch.json?preset=llama-3-8b&task=lora&tokens_b=1&option=2")
    assert response.status_code == 200
    config = response.json()
    gpus = config["nodes"] * config["gpus_per_node"]
    expected = f'attachment; filename="llama-3-8b-lora-option2-{config["sku"]}-{gpus}gpu.json"'
    assert response.headers["content-disposition"] == expected
    assert config["model"] == {"name": "Llama 3 8B", "preset": "llama-3-8b"}
    assert (config["task"], config["tokens"]) == ("lora", 1_000_000_000)


def test_a_model_given_by_size_names_its_download_by_size(client: TestClient) -> None:
    response = client.get("/results.csv?source=params&params_b=7&task=qlora")
    assert response.headers["content-disposition"] == 'attachment; filename="gpu-sizer-7b-qlora.csv"'


def test_a_launch_file_words_its_notes_in_the_pages_language(client: TestClient) -> None:
    """The launch block's notes from their codes (`texts`): English as the API gives them, Chinese from a Chinese
    page (before, the download's notes were English whatever the page's language)."""
    query = "/results/launch.json?preset=llama-3-8b&task=continued_pretrain&tokens_b=1&option=1"
    english, chinese = client.get(query).json(), client.get(f"{query}&lang=zh").json()
    stack = english["stack"]
    texts = english[stack]["texts"]["notes"]
    assert "continued_pretrain" in [text["code"] for text in texts]
    assert english[stack]["notes"] == [messages.launch(text["code"], text["params"]) for text in texts]
    assert chinese[stack]["notes"] == [messages.launch(text["code"], text["params"], "zh") for text in texts]
    assert any(note.startswith("继续预训练") for note in chinese[stack]["notes"])
