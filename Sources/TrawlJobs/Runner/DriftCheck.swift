import Foundation
import Trawl
import TrawlEngine
import TrawlJSON

/// Drift detection for a unit whose source names a `primary_key:` (`--primary-key`): the keys of the items the
/// unit wrote, as 16-byte digests (the first 128 bits of SHA-256 of the key's compact JSON), so that an item whose
/// key was written already is dropped instead of written twice, and a key seen twice in one pass, or fewer
/// distinct keys than the server announced, is drift. Used by one unit's task.
///
/// Memory: at most `keyCap` digests per unit (1,000,000: about 40 MB with the set's overhead). Past it the unit
/// stops checking (the items are all written, as without a primary key) and is flagged `drift_unchecked`.
///
/// Output already committed stays as written: the first answer for a key is the one kept (a page is durable when
/// its walk moves on, so a later answer cannot replace it without rewriting the file). The re-read writes only
/// the keys the first pass missed.
struct DriftCheck {
    static let keyCap = 1_000_000
    /// Pages and keys named in a flag: the first ones only.
    static let namedCap = 10

    let path: JSONKeyPath
    let cap: Int
    /// Keys written by the unit (both passes).
    private(set) var written: Set<KeyDigest> = []
    /// Keys read in the current pass: a key read twice in one pass is drift.
    private(set) var pass: Set<KeyDigest> = []
    private(set) var duplicatesDropped = 0
    /// Pages whose items repeated a key of the current pass, and the keys (as JSON, the first few).
    private(set) var repeatedPages: [Int] = []
    private(set) var repeatedKeys: [String] = []
    private(set) var overCap = false
    /// Items written by the unit (both passes, items without the key included).
    private(set) var keptTotal = 0

    init(path: JSONKeyPath, cap: Int = DriftCheck.keyCap) {
        self.path = path
        self.cap = cap
    }

    /// The key path inside a written line: under `item` when lines carry metadata.
    static func linePath(_ key: JSONKeyPath, withMeta: Bool) -> JSONKeyPath {
        withMeta ? JSONKeyPath(components: [.key("item")] + key.components) : key
    }

    var distinctInPass: Int { pass.count }
    var drifted: Bool { !repeatedPages.isEmpty }

    /// Starts the re-read: the repeats of the first pass are forgotten, the keys written are kept.
    mutating func startPass() {
        pass = []
        repeatedPages = []
        repeatedKeys = []
    }

    /// The lines of `lines` (JSONL) whose key was not written yet; notes a key read twice in this pass on page
    /// `index`. Items without the key are all kept.
    mutating func filter(_ lines: [UInt8], index: Int) -> (lines: [UInt8], kept: Int) {
        var out: [UInt8] = []
        out.reserveCapacity(lines.count)
        var kept = 0
        var start = lines.startIndex
        let decoder = JSONItemDecoder()
        while start < lines.endIndex {
            let end = lines[start...].firstIndex(of: UInt8(ascii: "\n")) ?? lines.endIndex
            let line = lines[start..<end]
            start = end + 1
            guard !overCap, let key = try? decoder.decode(JSONValue.self, from: Array(line), at: path), !key.isNull
            else {
                out += line
                out.append(UInt8(ascii: "\n"))
                kept += 1
                continue
            }
            let json = key.json
            let digest = KeyDigest { $0.update(json) }
            if !pass.insert(digest).inserted {
                if repeatedPages.last != index { repeatedPages.append(index) }
                if repeatedKeys.count < Self.namedCap {
                    repeatedKeys.append(String(String(decoding: json, as: UTF8.self).prefix(80)))
                }
            }
            if written.contains(digest) {
                duplicatesDropped += 1
                continue
            }
            if written.count >= cap {
                overCap = true
            } else {
                written.insert(digest)
            }
            out += line
            out.append(UInt8(ascii: "\n"))
            kept += 1
        }
        keptTotal += kept
        return (out, kept)
    }

    /// `pages` as text for a message: `page index 1, 2 and 5 more`.
    func pagesText() -> String {
        let shown = repeatedPages.prefix(Self.namedCap).map(String.init).joined(separator: ", ")
        let more = repeatedPages.count > Self.namedCap ? " and \(repeatedPages.count - Self.namedCap) more" : ""
        return "page index \(shown)\(more)"
    }
}

extension PaginationStyle {
    /// Page and offset walks can be read again from the top: a cursor or next-URL chain cannot.
    var canReread: Bool {
        switch kind {
        case .page, .offset, .link: true
        case .cursor, .nextURL: false
        }
    }
}
