import Foundation
import Synchronization
import TrawlEngine

/// A ``ResponseCache`` in a directory: per response, `DIGEST.body` (the body as received, decoded) and
/// `DIGEST.json` (its validators, headers, length and SHA-256), `DIGEST` being a hash of the key, so no URL or
/// credential is written. Bodies stay in files: a `304` reads its page's body back, checks its checksum, and
/// hands it to the page's extraction like a body from the network.
///
/// ```swift
/// let cache = try DiskResponseCache(directory: "jobs.cache", isPrivate: true)
/// ```
public final class DiskResponseCache: ResponseCache {
    public let directory: String
    public let isPrivate: Bool

    struct Meta: Codable {
        var etag: String?
        var lastModified: String?
        var sha256: String
        var length: Int
        var headers: [[String]]
    }

    /// Opens (creating it, 0700) `directory`. A cache is private when one principal uses it (a job's `--cache`):
    /// only then are responses to credentialed requests stored. Its files are created 0600: they hold responses.
    public init(directory: String, isPrivate: Bool) throws {
        self.directory = directory
        self.isPrivate = isPrivate
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    func path(_ key: ResponseCacheKey, _ suffix: String) -> String { directory + "/" + key.digest + suffix }

    private func meta(_ key: ResponseCacheKey) -> Meta? {
        let path = path(key, ".json")
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int,
            size <= Self.longestRecord, let data = FileManager.default.contents(atPath: path)
        else { return nil }
        return Self.record(data)
    }

    /// The longest record read (docs/security.md): a file on disk is input too, and a record holds a few headers.
    static let longestRecord = 1 << 20
    /// The most header fields a record may hold.
    static let mostRecordHeaders = 1000

    /// A record's fields, or `nil` when the bytes are not a record this cache wrote: over `longestRecord`, not
    /// JSON of the record's shape, a negative length, a checksum that is not 64 hex digits, over `mostRecordHeaders`
    /// fields or a field that is not a name and a value.
    static func record(_ data: Data) -> Meta? {
        guard data.count <= longestRecord, let meta = try? JSONDecoder().decode(Meta.self, from: data),
            meta.length >= 0, meta.sha256.utf8.count == 64, meta.sha256.allSatisfy({ $0.isASCII && $0.isHexDigit }),
            meta.headers.count <= mostRecordHeaders, meta.headers.allSatisfy({ $0.count == 2 })
        else { return nil }
        return meta
    }

    public func lookup(_ key: ResponseCacheKey) -> CachedResponse? {
        guard let meta = meta(key) else { return nil }
        var headers = HTTPHeaders()
        for pair in meta.headers { headers.add(pair[0], pair[1]) }
        return CachedResponse(etag: meta.etag, lastModified: meta.lastModified, headers: headers)
    }

    public func body(for key: ResponseCacheKey) -> [UInt8]? {
        guard let meta = meta(key), let data = FileManager.default.contents(atPath: path(key, ".body")) else {
            return nil
        }
        let bytes = [UInt8](data)
        var hasher = SHA256()
        hasher.update(bytes)
        guard bytes.count == meta.length, hasher.hexDigest() == meta.sha256 else {
            // Changed on disk (or torn by a crash between the body and its record): never served.
            try? FileManager.default.removeItem(atPath: path(key, ".json"))
            try? FileManager.default.removeItem(atPath: path(key, ".body"))
            return nil
        }
        return bytes
    }

    public func writer(for key: ResponseCacheKey, headers: HTTPHeaders) -> (any ResponseCacheWriter)? {
        let temporary = directory + "/.tmp-\(UUID().uuidString)"
        guard let file = try? DurableFile(path: temporary, truncatingTo: 0, syncingDirectory: false, ownerOnly: true)
        else {
            return nil
        }
        let kept = headers.filter { !Self.unstored.contains($0.name.lowercased()) }.map { [$0.name, $0.value] }
        let meta = Meta(
            etag: headers["ETag"], lastModified: headers["Last-Modified"], sha256: "", length: 0, headers: kept)
        return DiskCacheWriter(cache: self, key: key, file: file, meta: meta)
    }

    /// Headers that describe the transfer, not the page, or must not be replayed.
    static let unstored: Set<String> = [
        "set-cookie", "content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive",
        "location", "content-location", "authorization", "proxy-authorization", "www-authenticate",
    ]

    fileprivate func commit(_ key: ResponseCacheKey, body temporary: String, meta: Meta) {
        // No fsync: a cache may lose entries in a crash, never serve a wrong one. The body goes first, so a crash
        // before the record leaves the old record, whose checksum refuses this body.
        let manager = FileManager.default
        do {
            try? manager.removeItem(atPath: path(key, ".body"))
            try manager.moveItem(atPath: temporary, toPath: path(key, ".body"))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let record = directory + "/.tmp-\(UUID().uuidString)"
            let file = try DurableFile(path: record, syncingDirectory: false, ownerOnly: true)
            do {
                try file.append([UInt8](try encoder.encode(meta)))
                file.close()
                guard rename(record, path(key, ".json")) == 0 else {
                    throw FileError("rename", record, reason: String(cString: strerror(errno)))
                }
            } catch {
                file.close()
                try? manager.removeItem(atPath: record)
                throw error
            }
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
        }
    }
}

/// Streams one body into a temporary file, then moves it into place with its record.
final class DiskCacheWriter: ResponseCacheWriter {
    private struct State {
        var hasher = SHA256()
        var length = 0
        var failed = false
        var done = false
    }

    let cache: DiskResponseCache
    let key: ResponseCacheKey
    let file: DurableFile
    let meta: DiskResponseCache.Meta
    private let state = Mutex(State())

    init(cache: DiskResponseCache, key: ResponseCacheKey, file: DurableFile, meta: DiskResponseCache.Meta) {
        self.cache = cache
        self.key = key
        self.file = file
        self.meta = meta
    }

    func append(_ bytes: [UInt8]) {
        state.withLock { state in
            guard !state.failed, !state.done else { return }
            do {
                try file.append(bytes)
                state.hasher.update(bytes)
                state.length += bytes.count
            } catch {
                state.failed = true
            }
        }
    }

    func commit() {
        let result = state.withLock { state -> (String, Int)? in
            guard !state.done else { return nil }
            state.done = true
            return state.failed ? nil : (state.hasher.hexDigest(), state.length)
        }
        file.close()
        guard let (digest, length) = result else {
            try? FileManager.default.removeItem(atPath: file.path)
            return
        }
        var meta = meta
        meta.sha256 = digest
        meta.length = length
        cache.commit(key, body: file.path, meta: meta)
    }

    func discard() {
        let first = state.withLock { state -> Bool in
            defer { state.done = true }
            return !state.done
        }
        guard first else { return }
        file.close()
        try? FileManager.default.removeItem(atPath: file.path)
    }
}
