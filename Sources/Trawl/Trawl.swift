// Routes, adapters, decoding and stubs over the layers below, which are re-exported:
// `import Trawl` gives the engine (`Client`, `Request`) and streaming JSON (`JSONValue`, `JSONKeyPath`).
@_exported import TrawlEngine
@_exported import TrawlJSON
