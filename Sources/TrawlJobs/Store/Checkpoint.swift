import Foundation
import Trawl
import TrawlEngine
import TrawlJSON

/// The durable state of a job in its state directory (`checkpoint.json`), replaced atomically after every
/// batch of committed pages. Secrets never appear in it: stored URLs pass through the job's redactor.
struct Checkpoint: Codable, Sendable {
    var version = 1
    /// The job's fingerprint: a changed job file is refused unless restarted.
    var fingerprint: String
    /// `i/n`, or `all` when unsharded.
    var shard: String
    var withMeta: Bool
    /// Per output file: bytes committed and how many of its units (in order) they hold.
    var outputs: [String: OutputState] = [:]
    /// Units started but not yet merged into their output, by ordinal (`UnitID.ordinal`: a planned unit, a child,
    /// a parent end or a window; the layout older checkpoints used for planned units and children).
    var units: [String: UnitState] = [:]
    /// True once every unit has been merged.
    var complete = false
    /// Completeness flags of units already merged, by ordinal (those of other units are in their state).
    var flags: [String: [CompletenessFlag]]?
    /// Incremental jobs: this run's id, and what the merged units of incremental sources read (by ordinal).
    var run: String?
    var incremental: [String: IncrementalProgress]?
    /// Parallel windows (`split:`): the run's start time, where a window range without `split.end` ends (kept so
    /// that a resumed run cuts the same windows), and the windows bisected so far, by ordinal (each is replaced by
    /// its two halves, placed before it; it stays in the order as a done unit with no items).
    var started: String?
    var bisected: [Int]?
    /// Bytes of each parent unit's children file (`children/SOURCE-PARENT.jsonl`), by seal key.
    var children: [String: Int64]?
    /// SHA-256 of the checkpoint's own encoding without this field: a checkpoint changed by hand (a unit marked
    /// done, a next URL or an output length edited) is refused instead of trusted. Absent in older checkpoints.
    var seal: String?

    /// The checkpoint as written to `checkpoint.json`: sorted keys, sealed.
    ///
    /// Written after every batch: the unsealed encoding is made once, hashed, and the seal put where sorted keys
    /// place it (before the top-level `"shard"`, which every checkpoint has), instead of encoding a second time.
    /// The bytes are those of encoding the sealed checkpoint (`CheckpointTests` compares them).
    func sealedEncoding() throws -> [UInt8] {
        var unsealed = self
        unsealed.version = Swift.max(Self.sealedVersion, version)
        unsealed.seal = nil
        let body = try Self.encoded(unsealed)
        var hasher = SHA256()
        hasher.update(body)
        let seal = hasher.hexDigest()
        guard let at = Self.topLevelKey(Array("\"shard\":".utf8), in: body) else {
            var sealed = unsealed
            sealed.seal = seal
            return try Self.encoded(sealed)
        }
        let member = Array("\"seal\":\"\(seal)\",".utf8)
        var sealed: [UInt8] = []
        sealed.reserveCapacity(body.count + member.count)
        sealed.append(contentsOf: body[..<at])
        sealed.append(contentsOf: member)
        sealed.append(contentsOf: body[at...])
        return sealed
    }

    /// Where `key` (quoted, with its colon) starts as a member of the outermost object of the JSON `bytes`.
    static func topLevelKey(_ key: [UInt8], in bytes: [UInt8]) -> Int? {
        var depth = 0
        var inString = false
        var escaped = false
        for (index, byte) in bytes.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
            let separates = byte == UInt8(ascii: ",") || (byte == UInt8(ascii: "{") && depth == 1)
            if separates, depth == 1, bytes[(index + 1)...].starts(with: key) { return index + 1 }
        }
        return nil
    }

    private static func encoded(_ checkpoint: Checkpoint, legacy: Bool = false) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if legacy { encoder.keyEncodingStrategy = .custom { LegacyReportKeys.camelCase($0) } }
        return [UInt8](try encoder.encode(checkpoint))
    }

    /// SHA-256 of the sorted-keys encoding without the seal: what the seal says. `legacy`: as earlier releases
    /// encoded it, with the report types' camelCase keys (`pageIndices`, `keptPages`, …).
    func contentDigest(legacy: Bool = false) throws -> String {
        var unsealed = self
        unsealed.seal = nil
        var hasher = SHA256()
        hasher.update(try Self.encoded(unsealed, legacy: legacy))
        return hasher.hexDigest()
    }

    /// Checkpoints from this version on are sealed: one without its seal was changed.
    static let sealedVersion = 2

    /// Reads `checkpoint.json`, and whether its content still matches its seal (true for an older, unsealed one).
    static func read(_ bytes: [UInt8]) throws -> (checkpoint: Checkpoint, intact: Bool) {
        let decoder = JSONDecoder()
        // The flags and failure records it holds had camelCase keys before the report went snake_case.
        decoder.keyDecodingStrategy = .custom { LegacyReportKeys.snakeCase($0) }
        let checkpoint = try decoder.decode(Checkpoint.self, from: Data(bytes))
        guard let seal = checkpoint.seal else { return (checkpoint, checkpoint.version < sealedVersion) }
        let intact = try checkpoint.contentDigest() == seal || checkpoint.contentDigest(legacy: true) == seal
        return (checkpoint, intact)
    }

    struct OutputState: Codable, Sendable, Equatable {
        /// Bytes that hold the first `merged` units, in job order: final.
        var length: Int64 = 0
        var merged = 0
        /// Set by a run that ended with units not done: the file's length after it appended, past `length`, what
        /// the later units hold in job order (a failed unit's kept pages, whole done units), so their items are
        /// readable. Provisional: the next run cuts the file back to `length` and appends again from the
        /// segments, which stay in the state directory until their unit is merged.
        var provisional: Int64?
    }

    struct UnitState: Codable, Sendable {
        enum Status: String, Codable, Sendable {
            case running, done, failed
        }
        var id: String
        var status: Status = .running
        /// Pages of the walk committed to the unit's segment.
        var pages = 0
        /// With a primary key: pages a re-read after drift committed to the segment past `pages` (set once the
        /// re-read has begun; a resumed unit reads again from the first page).
        var rereadPages: Int?
        var items = 0
        /// Bytes committed to the unit's segment.
        var segment: Int64 = 0
        /// Checksum over the index records of the committed pages (see `SegmentIndex`); nil before the first.
        var pageDigest: String?
        /// Serial walk: the next page to fetch (`nil` with `status == .done`).
        var next: StoredPageRequest?
        /// Planned walk: the first page, from which the remaining requests are derived again.
        var first: StoredPage?
        /// Pages known in all (planned walks).
        var pageTotal: Int?
        /// The last failure (redacted), when `status == .failed`.
        var failure: String?
        /// The item total the first page announced, when the strategy reads one.
        var expectedItems: Int?
        /// Where it was announced (`the X-Total-Count header`, `'total' in the body`).
        var expectedFrom: String?
        /// Signs that the unit's collection is not all there (a cap reached, `incomplete_results`), kept with
        /// the pages they were found on so that a resumed run still reports them.
        var flags: [CompletenessFlag]?
        /// An incremental source's unit: the largest cursor and the window's items read so far.
        var incremental: IncrementalProgress?
        /// Where a walk stopped on a page whose pagination data could not go on (the page itself is kept): a run
        /// resuming the unit fails with it again (`--restart` walks the unit afresh).
        var stuck: PageFailureRecord?

        /// Adds `flag`, or replaces the earlier one of its kind in place (so the order stays that of discovery).
        mutating func setFlag(_ flag: CompletenessFlag) {
            var current = flags ?? []
            if let index = current.firstIndex(where: { $0.kind == flag.kind }) {
                current[index] = flag
            } else {
                current.append(flag)
            }
            flags = current
        }

        func flag(_ kind: CompletenessFlag.Kind) -> CompletenessFlag? {
            flags?.first { $0.kind == kind }
        }
    }
}

/// A page request without its headers or body, which are derived from the unit again on resume.
struct StoredPageRequest: Codable, Sendable, Equatable {
    var url: String
    var kind: String
    var number: Int?
    var text: String?
    /// Redaction lost a value the resume cannot put back: the server put its own value in a parameter named like a
    /// secret (`?token=…`, `?sig=…`), which the state does not keep. A resume refuses such a page rather than ask
    /// for another one. (Absent when the job's own secrets, which a resume restores, were all that was hidden.)
    var lossy: Bool?

    /// `restore` is what a resume does to the stored text (the job's secrets put back).
    init(_ request: PageRequest, redact: (String) -> String, restore: (String) -> String) {
        url = redact(request.request.url)
        var cursor: String?
        switch request.position {
        case .number(let value): kind = "number"; number = value
        case .offset(let value): kind = "offset"; number = value
        case .cursor(let value): kind = "cursor"; text = value.map(redact); cursor = value
        case .url(let value): kind = "url"; text = redact(value); cursor = value
        }
        if Self.loses(url, request.request.url, restore) || Self.loses(text, cursor, restore) { lossy = true }
    }

    /// Whether `text` still holds the redaction placeholder as a value (`=REDACTED`, `:REDACTED@`).
    static func holdsPlaceholder(_ text: String?) -> Bool {
        guard let text else { return false }
        return text.contains("=" + Redaction.placeholder) || text.contains(":" + Redaction.placeholder + "@")
    }

    /// Whether `stored` (redacted from `original`) does not restore to it.
    static func loses(_ stored: String?, _ original: String?, _ restore: (String) -> String) -> Bool {
        guard let stored, let original, stored != original else { return false }
        return restore(stored) != original
    }

    func pageRequest(base: Request, unredact: (String) -> String) throws -> PageRequest {
        if lossy == true {
            throw CheckpointError(
                "the saved page \(url) held the server's own value in a parameter named like a secret, which the "
                    + "state does not keep (REDACTED), so that page cannot be asked for again exactly")
        }
        var request = base
        request.url = unredact(url)
        let position: PagePosition
        switch kind {
        case "number": position = .number(number ?? 0)
        case "offset": position = .offset(number ?? 0)
        case "cursor": position = .cursor(text.map(unredact))
        case "url": position = .url(unredact(text ?? url))
        default: throw CheckpointError("unknown page position kind '\(kind)'")
        }
        // A state written before `lossy` was kept: a placeholder nothing restored is a lost value all the same.
        if Self.holdsPlaceholder(request.url) || Self.holdsPlaceholder(text.map(unredact)) {
            throw CheckpointError(
                "the saved page \(url) holds REDACTED where the server's own value was, which the state does not "
                    + "keep (a parameter named like a secret), so that page cannot be asked for again exactly")
        }
        return PageRequest(request: request, position: position)
    }
}

/// What a strategy needs of a first page to plan the rest again: its request, position, item count,
/// captured side fields and `Link` headers.
struct StoredPage: Codable, Sendable {
    var request: StoredPageRequest
    var itemCount: Int
    var captured: [String: String]
    var headURL: String
    var links: [String]
    /// As `StoredPageRequest.lossy`, for the captured values, the head's URL and the `Link` headers the remaining
    /// pages are planned from.
    var lossy: Bool?

    init(_ page: PageResponse, redact: (String) -> String, restore: (String) -> String) {
        request = StoredPageRequest(
            PageRequest(request: page.request, position: page.position), redact: redact, restore: restore)
        itemCount = page.itemCount
        var lost = false
        captured = Dictionary(uniqueKeysWithValues: page.captured.map {
            let original = String(decoding: $0.value.json, as: UTF8.self)
            let stored = redact(original)
            lost = lost || StoredPageRequest.loses(stored, original, restore)
            return ($0.key.description, stored)
        })
        headURL = redact(page.head.url)
        lost = lost || StoredPageRequest.loses(headURL, page.head.url, restore)
        let rawLinks = page.head.headers.values(for: "Link")
        links = rawLinks.map(redact)
        for (stored, original) in zip(links, rawLinks) { lost = lost || StoredPageRequest.loses(stored, original, restore) }
        if lost { lossy = true }
    }

    func pageResponse(base: Request, unredact: (String) -> String) throws -> PageResponse {
        if lossy == true {
            throw CheckpointError(
                "the saved first page \(headURL) named its pages with the server's own value in a parameter named "
                    + "like a secret, which the state does not keep (REDACTED), so the same pages cannot be planned "
                    + "again")
        }
        let pageRequest = try request.pageRequest(base: base, unredact: unredact)
        var captured: [JSONKeyPath: JSONValue] = [:]
        for (path, text) in self.captured {
            let value = try JSONItemDecoder().decode(JSONValue.self, from: Array(unredact(text).utf8))
            captured[JSONKeyPath(path)] = value
        }
        var headers = HTTPHeaders()
        for link in links {
            let restored = unredact(link)
            if StoredPageRequest.holdsPlaceholder(restored) {
                throw CheckpointError(
                    "the saved first page \(headURL) named its pages with REDACTED where the server's own value was "
                        + "(a parameter named like a secret), so the same pages cannot be planned again")
            }
            headers.add("Link", restored)
        }
        let head = ResponseHead(
            status: 200, headers: headers, url: unredact(headURL), httpVersion: .http1_1, remoteIP: nil,
            remotePort: 0, timings: .zero, redirects: [])
        return PageResponse(
            request: pageRequest.request, position: pageRequest.position, itemCount: itemCount, captured: captured,
            head: head)
    }
}

struct CheckpointError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
