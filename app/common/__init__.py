"""The shared kit under the domain: the error tree and its one RFC 9457 handler (`errors`), settings, money, the
request bodies' checks (`jsonguard`) and base schemas, the outgoing TLS context. Its errors word problems through
app.text; nothing here imports the domain or delivery (pyproject.toml, the layers contract)."""
