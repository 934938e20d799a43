// Routes, pagination and bulk jobs: see the routes issue. Re-exports the layers below.
@_exported import TrawlEngine
