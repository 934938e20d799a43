import Foundation
import Trawl
import TrawlEngine
import TrawlJSON

/// The one set of key digests a unit with a primary key (`primary_key:`, `--primary-key`) keeps: each item it wrote
/// is hashed once (``KeyDigest``: the first 128 bits of SHA-256 of the key's compact JSON; an item without the key
/// by its whole line), and the set serves both checks that need it:
/// - the completeness count (`allow_short`): ``distinct`` is the number of distinct items written;
/// - drift detection (`filters`): an item whose key was written already is dropped instead of written twice, and a
///   key seen twice in one pass, or fewer distinct keys than the server announced, is drift.
///
/// An incremental source counts only (`filters: false`): its window decides what is written.
///
/// Memory: at most `keyCap` digests per unit (1,000,000: about 40 MB with the set's overhead). Past it the set is
/// dropped: the unit stops checking (every item is written, as without a primary key), is flagged
/// `drift_unchecked` when it filters, and its distinct count is unknown (written lines are compared instead).
///
/// A resumed unit gets the set back from its segment (``restore(_:)``), which holds exactly the lines its
/// checkpoint counts: the set never disagrees with the output, across any number of kills.
///
/// The newest answer wins: within the first pass a repeated key is dropped as it comes (its page is durable
/// already), but the re-read after drift writes every item it reads (`newest`), and when the unit ends its segment
/// is compacted to the last line of each key (``SegmentCompaction``): ``itemsAfterCompaction`` lines.
///
/// ```swift
/// var keys = DriftCheck(path: "id")
/// keys.filter(Array("{\"id\":1}\n{\"id\":1}\n".utf8), index: 0).kept   // 1
/// keys.distinct                                                        // 1
/// ```
struct DriftCheck {
    static let keyCap = 1_000_000
    /// Pages and keys named in a flag: the first ones only.
    static let namedCap = 10

    let path: JSONKeyPath
    let cap: Int
    /// Drops repeated keys and tells drift; `false`: counts only.
    let filters: Bool
    /// Digests of the items written by the unit (both passes, earlier runs' restored): keys, and whole lines of
    /// items without the key.
    private(set) var written: Set<KeyDigest> = []
    /// Keys read in the current pass: a key read twice in one pass is drift.
    private(set) var pass: Set<KeyDigest> = []
    private(set) var duplicatesDropped = 0
    /// Pages whose items repeated a key of the current pass, and the keys (as JSON, the first few).
    private(set) var repeatedPages: [Int] = []
    private(set) var repeatedKeys: [String] = []
    private(set) var overCap = false
    /// Items written by the unit (both passes, items without the key included, restored ones too).
    private(set) var keptTotal = 0
    /// Lines written without the key (restored ones too), and how many distinct ones ``written`` holds.
    private(set) var keylessLines = 0
    private(set) var keylessDistinct = 0
    /// Lines restored from an earlier run's segment, and those of them without the key.
    private(set) var restoredLines = 0
    private var restoredKeyless = 0
    /// A resumed unit's keys written in this run (`nil` when nothing was restored: then every key is this run's).
    private var fresh: Set<KeyDigest>?

    init(path: JSONKeyPath, cap: Int = DriftCheck.keyCap, filters: Bool = true) {
        self.path = path
        self.cap = cap
        self.filters = filters
    }

    /// The key path inside a written line: under `item` when lines carry metadata.
    static func linePath(_ key: JSONKeyPath, withMeta: Bool) -> JSONKeyPath {
        withMeta ? JSONKeyPath(components: [.key("item")] + key.components) : key
    }

    var distinctInPass: Int { pass.count }
    var drifted: Bool { !repeatedPages.isEmpty }
    /// Distinct items written (by the key; items without it by their line), or `nil` past the cap.
    var distinct: Int? { overCap ? nil : written.count }
    /// The lines the unit's segment holds once compacted to the newest line of each key: one per distinct key,
    /// and every line without the key.
    var itemsAfterCompaction: Int { written.count - keylessDistinct + keylessLines }
    /// Of the lines compaction drops (``keptTotal`` less ``itemsAfterCompaction``), those written in this run: a
    /// key's last line is this run's when this run wrote the key at all (its lines follow the restored ones).
    var droppedInThisRun: Int {
        let keptThisRun = (fresh?.count ?? written.count - keylessDistinct) + keylessLines - restoredKeyless
        return keptTotal - restoredLines - keptThisRun
    }

    /// Starts the re-read: the repeats of the first pass are forgotten, the keys written are kept.
    mutating func startPass() {
        pass = []
        repeatedPages = []
        repeatedKeys = []
    }

    /// The lines of `lines` (JSONL) whose key was not written yet; notes a key read twice in this pass on page
    /// `index`. Items without the key are all kept. Counting only (`filters` false), every line is kept. The
    /// re-read (`newest`) keeps every line too, a key written before included: compaction keeps its last line.
    mutating func filter(_ lines: [UInt8], index: Int, newest: Bool = false) -> (lines: [UInt8], kept: Int) {
        var out: [UInt8] = []
        out.reserveCapacity(lines.count)
        var kept = 0
        let decoder = JSONItemDecoder()
        Self.forEachLine(lines) { line in
            let key = overCap ? nil : Self.key(of: line, at: path, decoder: decoder)
            if let key {
                let digest = KeyDigest { $0.update(key) }
                if filters, !pass.insert(digest).inserted {
                    if repeatedPages.last != index { repeatedPages.append(index) }
                    if repeatedKeys.count < Self.namedCap {
                        repeatedKeys.append(String(String(decoding: key, as: UTF8.self).prefix(80)))
                    }
                }
                if filters, !newest, written.contains(digest) {
                    duplicatesDropped += 1
                    return
                }
                remember(digest)
                if !overCap { fresh?.insert(digest) }
            } else if !overCap {
                rememberKeyless(line)
            }
            out += line
            out.append(UInt8(ascii: "\n"))
            kept += 1
        }
        keptTotal += kept
        return (out, kept)
    }

    /// Takes back the digests of lines the unit wrote in an earlier run (its segment's, `lines` being a whole
    /// number of them): they count as written and as read in the current pass, the pass the resumed walk goes on.
    mutating func restore(_ lines: some Collection<UInt8>) {
        let decoder = JSONItemDecoder()
        if fresh == nil { fresh = [] }
        Self.forEachLine(Array(lines)) { line in
            keptTotal += 1
            restoredLines += 1
            guard !overCap else { return }
            if let key = Self.key(of: line, at: path, decoder: decoder) {
                let digest = KeyDigest { $0.update(key) }
                if filters { pass.insert(digest) }
                remember(digest)
            } else {
                restoredKeyless += 1
                rememberKeyless(line)
            }
        }
    }

    private mutating func rememberKeyless(_ line: ArraySlice<UInt8>) {
        keylessLines += 1
        if remember(Self.lineDigest(line)) { keylessDistinct += 1 }
    }

    /// Adds `digest` to the written set (true when it is new); past the cap the set goes and the unit checks
    /// nothing more.
    @discardableResult
    private mutating func remember(_ digest: KeyDigest) -> Bool {
        guard written.insert(digest).inserted else { return false }
        guard written.count > cap else { return true }
        overCap = true
        written = []
        pass = []
        fresh = fresh.map { _ in [] }
        return true
    }

    /// Calls `body` with each non-empty line of `lines`.
    static func forEachLine(_ lines: [UInt8], _ body: (ArraySlice<UInt8>) -> Void) {
        var start = lines.startIndex
        while start < lines.endIndex {
            let end = lines[start...].firstIndex(of: UInt8(ascii: "\n")) ?? lines.endIndex
            let line = lines[start..<end]
            start = end + 1
            if !line.isEmpty { body(line) }
        }
    }

    /// The compact JSON of the key in `line`, `nil` when the line has none (or it is null).
    static func key(of line: ArraySlice<UInt8>, at path: JSONKeyPath, decoder: JSONItemDecoder) -> [UInt8]? {
        guard let key = try? decoder.decode(JSONValue.self, from: Array(line), at: path), !key.isNull else {
            return nil
        }
        return key.json
    }

    /// An item without the key counts as distinct by its whole line (a 0 byte first: no key's JSON starts so).
    private static func lineDigest(_ line: ArraySlice<UInt8>) -> KeyDigest {
        KeyDigest { hasher in
            hasher.update([0])
            hasher.update(line)
        }
    }

    /// `pages` as text for a message: `page index 1, 2 and 5 more`.
    func pagesText() -> String {
        let shown = repeatedPages.prefix(Self.namedCap).map(String.init).joined(separator: ", ")
        let more = repeatedPages.count > Self.namedCap ? " and \(repeatedPages.count - Self.namedCap) more" : ""
        return "page index \(shown)\(more)"
    }
}

extension DriftCheck {
    /// Restores the digests of the lines in the segment at `path` (a resumed unit's, cut back to what its
    /// checkpoint counts), reading 1 MB at a time. Throws `JobError` naming the file when it cannot be read.
    mutating func restore(segment path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw JobError.state(
                "the segment \(path) of a resumed unit cannot be opened to read its primary keys",
                hint: "pass --restart to start the job over")
        }
        defer { try? handle.close() }
        var carry: [UInt8] = []
        do {
            while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty {
                carry += data
                guard let last = carry.lastIndex(of: UInt8(ascii: "\n")) else { continue }
                restore(carry[...last])
                carry.removeSubrange(...last)
            }
        } catch {
            throw JobError.state(
                "the segment \(path) of a resumed unit could not be read (\(error))",
                hint: "pass --restart to start the job over")
        }
        if !carry.isEmpty { restore(carry) }
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
