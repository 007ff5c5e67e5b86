"""Models named by their Hugging Face id: config.json read from the Hub and kept in the database."""
