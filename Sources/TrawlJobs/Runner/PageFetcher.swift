import Foundation
import Trawl
import TrawlEngine
import TrawlJSON

/// One page fetched for a bulk job: its items as JSONL lines, ready to append.
struct FetchedPage: Sendable {
    var lines: [UInt8]
    var itemCount: Int
    var captured: [JSONKeyPath: JSONValue]
    var head: ResponseHead
    /// Body bytes received (decoded).
    var bodyBytes: Int
    var latency: Duration
    /// `scheme://host:port` of the request, set by the walker (which already knows it) for per-host counts.
    var host = ""
}

/// Fetches one page and turns the items at the source's key path into JSONL lines as the body streams in; a
/// page is the unit of atomicity, so its lines are held until the page ends (bounded by `maxPageBytes`).
struct PageFetcher: Sendable {
    let client: Client
    let items: JSONKeyPath
    let capture: [JSONKeyPath]
    let maxPageBytes: Int
    /// `{"source":…,"unit":…,"page":N,"item":` when lines carry metadata.
    let metaPrefix: (@Sendable (Int) -> [UInt8])?
    /// Side fields written into each metadata line (`"side":{…}`), read from the page once it has ended.
    var side: [JSONKeyPath] = []

    /// What is known about a failed attempt beyond the error: the response head when one arrived.
    struct Failure: Error {
        var error: any Error
        var head: ResponseHead?
    }

    func fetch(_ request: Request, pageIndex: Int) async throws(Failure) -> FetchedPage {
        let start = ContinuousClock.now
        var head: ResponseHead?
        do {
            let response = try await client.stream(request)
            head = response.head
            guard response.head.isSuccess else {
                let excerpt = (try? await response.body.collect(upTo: 64 << 10)) ?? []
                throw TrawlError(
                    code: .unexpectedStatus,
                    message: "HTTP \(response.status) instead of a page of items at '\(items)'",
                    hint: response.status == 429 || response.status >= 500 ? "retried with backoff" : nil,
                    method: request.method.rawValue, url: response.head.url, status: response.status,
                    headers: response.headers, bodyExcerpt: Array(excerpt.prefix(512)))
            }
            let extractor = try JSONExtractor(path: items, capture: capture, form: .json)
            var lines: [UInt8] = []
            var count = 0
            var ends: [Int] = []
            let limit = maxPageBytes
            let emit: (JSONElement) throws -> Void = { element in
                lines.append(contentsOf: element.json)
                if self.metaPrefix != nil { ends.append(lines.count) }
                lines.append(UInt8(ascii: "\n"))
                count += 1
                if lines.count > limit {
                    throw TrawlError(
                        code: .tooLarge, message: "the page's items exceed \(limit) bytes",
                        hint: "raise --max-page-bytes or ask for smaller pages", method: request.method.rawValue,
                        url: request.url)
                }
            }
            do {
                for try await chunk in response.body { try extractor.feed(chunk, onElement: emit) }
                let summary = try extractor.finish(onElement: emit)
                if summary.collection == .missing {
                    throw TrawlError(
                        code: .invalidBody, message: "the page has no value at '\(items)'",
                        hint: "check the items key path against the response", method: request.method.rawValue,
                        url: response.head.url)
                }
                if let metaPrefix {
                    lines = wrap(lines, ends: ends, prefix: metaPrefix(pageIndex), captured: summary.captured)
                }
                return FetchedPage(
                    lines: lines, itemCount: count, captured: summary.captured, head: response.head,
                    bodyBytes: extractor.byteCount, latency: ContinuousClock.now - start)
            } catch let error as JSONError {
                throw TrawlError(
                    code: .invalidBody, message: "the page is not the expected JSON: \(error)",
                    method: request.method.rawValue, url: response.head.url, underlying: error)
            }
        } catch {
            throw Failure(error: error, head: head)
        }
    }

    /// Wraps each item line: `PREFIX ITEM ,"side":{…} }` (the side object only when side fields were asked for).
    private func wrap(_ lines: [UInt8], ends: [Int], prefix: [UInt8], captured: [JSONKeyPath: JSONValue]) -> [UInt8] {
        var suffix: [UInt8] = []
        if !side.isEmpty {
            suffix += Array(#","side":{"#.utf8)
            for (index, path) in side.enumerated() {
                if index > 0 { suffix.append(UInt8(ascii: ",")) }
                suffix += JSONValue.string(path.description).json
                suffix.append(UInt8(ascii: ":"))
                suffix += (captured[path] ?? .null).json
            }
            suffix.append(UInt8(ascii: "}"))
        }
        suffix += Array("}\n".utf8)
        var wrapped: [UInt8] = []
        wrapped.reserveCapacity(lines.count + ends.count * (prefix.count + suffix.count))
        var start = 0
        for end in ends {
            wrapped += prefix
            wrapped += lines[start..<end]
            wrapped += suffix
            start = end + 1
        }
        return wrapped
    }
}
