"""Text for people, in English and Chinese: every catalog (codes and their parameters to words) and the renderers
that turn them into the API's messages, the pages and the quote's PDF. The domain emits codes; this package words
them. It imports nothing of the app but the estimator's vocabulary and tables (pyproject.toml, the layers contract)."""
