import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A failed file-system operation: which, on what path, and the system's reason.
///
/// ```swift
/// do { _ = try DurableFile(path: "/read-only/out.jsonl") }
/// catch let error as FileError { print(error) }   // "cannot open /read-only/out.jsonl: Permission denied"
/// ```
public struct FileError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var path: String
    public var reason: String

    public init(_ operation: String, _ path: String, reason: String) {
        self.operation = operation
        self.path = path
        self.reason = reason
    }

    init(_ operation: String, _ path: String, errno code: Int32 = errno) {
        self.init(operation, path, reason: String(cString: strerror(code)))
    }

    public var description: String { "cannot \(operation) \(path): \(reason)" }
}

/// A file written for crash safety: appends at a known length, `fsync`, truncation back to a checkpoint,
/// and appending another file's contents (read and written through a 1 MiB buffer).
///
/// Creating the file also `fsync`s its directory (unless asked not to), so that a checkpoint naming the file
/// never outlives the file's directory entry after a power loss.
///
/// Not thread-safe: one writer owns it.
///
/// ```swift
/// let out = try DurableFile(path: "items.jsonl", truncatingTo: checkpointedLength)
/// try out.append(Array("{\"id\":1}\n".utf8))
/// try out.sync()              // the line is on disk before the checkpoint says so
/// ```
public final class DurableFile: @unchecked Sendable {
    public let path: String
    /// Bytes in the file (what this writer has written, after any truncation).
    public private(set) var length: Int64
    /// Whether opening the file created it.
    public let created: Bool
    /// True when `path` is not a regular file but a pipe, a device or a socket (`/dev/null`, a FIFO), or names
    /// a descriptor (`/dev/stdout`, `/dev/fd/N`, whatever it is), opened with `allowingStream`: bytes are
    /// written into it in order, as curl does; it cannot be synced, truncated or resumed.
    public let isStream: Bool
    private var descriptor: Int32

    /// Opens (creating) `path` for writing at its end, or after truncating it to `length` when given. A file
    /// shorter than `length` is an error: the data the checkpoint counted on is gone.
    ///
    /// Never through a symbolic link: a link (or anything but a regular file) planted at `path` is an error
    /// naming it, unless `allowingStream` is set and the path names a pipe, device or socket (see `isStream`),
    /// which is then opened where it is, through links (`/dev/stdout` is one).
    ///
    /// When the file is created and `syncingDirectory` is true, the directory holding it is `fsync`ed before
    /// this returns, so the new entry is durable; pass false for a file that is renamed into place (and whose
    /// directory is synced then) or that nothing refers to. `owner` creates it readable by its owner only (0600,
    /// for a file holding a response or a credential), else 0644 (both less the umask).
    public init(
        path: String, truncatingTo length: Int64? = nil, syncingDirectory: Bool = true, allowingStream: Bool = false,
        ownerOnly: Bool = false
    ) throws {
        self.path = path
        let opened = try Self.openDescriptor(path, allowingStream: allowingStream, mode: ownerOnly ? 0o600 : 0o644)
        descriptor = opened.descriptor
        created = opened.created
        isStream = opened.stream
        if isStream {
            self.length = 0
            if let length, length > 0 {
                Glibc.close(descriptor)
                throw FileError(
                    "resume", path,
                    reason: "it is not a regular file (a pipe or a device), so the \(length) bytes written into it"
                        + " before cannot be cut back to the checkpoint")
            }
            return
        }
        if created, syncingDirectory {
            do {
                try DurableFiles.syncDirectory(containing: path)
            } catch {
                Glibc.close(descriptor)
                throw error
            }
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let error = FileError("stat", path)
            Glibc.close(descriptor)
            throw error
        }
        let size = Int64(status.st_size)
        if let length {
            guard size >= length else {
                Glibc.close(descriptor)
                throw FileError(
                    "resume", path,
                    reason: "it holds \(size) bytes but the checkpoint recorded \(length): it was changed outside"
                        + " trawl")
            }
            if size > length, ftruncate(descriptor, off_t(length)) != 0 {
                let error = FileError("truncate", path)
                Glibc.close(descriptor)
                throw error
            }
            self.length = length
        } else {
            self.length = size
        }
    }

    /// Creates `path` (`O_EXCL`), else opens the regular file there, never following a link (`O_NOFOLLOW`).
    private static func openDescriptor(_ path: String, allowingStream: Bool, mode: mode_t) throws
        -> (descriptor: Int32, created: Bool, stream: Bool)
    {
        let created = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        if created >= 0 { return (created, true, false) }
        guard errno == EEXIST else { throw FileError("open", path) }
        var link = stat()
        guard lstat(path, &link) == 0 else { throw FileError("open", path) }
        let isLink = link.st_mode & S_IFMT == S_IFLNK
        var target = stat()
        let targetKind = stat(path, &target) == 0 ? target.st_mode & S_IFMT : nil
        // /dev/stdout and /dev/fd/N are links to whatever the descriptor is, a regular file included.
        let descriptorPath = path.hasPrefix("/dev/") || path.hasPrefix("/proc/")
        if allowingStream, let kind = targetKind, kind != S_IFREG || descriptorPath, kind != S_IFDIR {
            // A pipe or device is written where it is, as curl does: following a link (/dev/stdout) is the point.
            let descriptor = open(path, O_WRONLY | O_CLOEXEC | (kind == S_IFREG ? O_TRUNC : 0))
            guard descriptor >= 0 else { throw FileError("open", path) }
            var opened = stat()
            guard fstat(descriptor, &opened) == 0, opened.st_mode & S_IFMT != S_IFREG || descriptorPath else {
                Glibc.close(descriptor)
                throw FileError("open", path, reason: "it changed from a pipe or device to a regular file")
            }
            return (descriptor, false, true)
        }
        if isLink {
            throw FileError(
                "open", path,
                reason: "it is a symbolic link, and trawl never writes through one (remove the link, or name the"
                    + " file it points to)")
        }
        if link.st_mode & S_IFMT == S_IFDIR { throw FileError("open", path, errno: EISDIR) }
        guard link.st_mode & S_IFMT == S_IFREG else {
            throw FileError("open", path, reason: "it is not a regular file (a pipe, device or socket)")
        }
        let descriptor = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ELOOP {
                throw FileError("open", path, reason: "it is a symbolic link, and trawl never writes through one")
            }
            throw FileError("open", path)
        }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, opened.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(descriptor)
            throw FileError("open", path, reason: "it is not a regular file (a pipe, device or socket)")
        }
        // A hard link planted there would be written (and truncated) through just like a symbolic one.
        guard opened.st_nlink <= 1 else {
            Glibc.close(descriptor)
            throw FileError(
                "open", path,
                reason: "it has \(opened.st_nlink) hard links, and trawl never writes into a file that has other names"
                    + " (remove it)")
        }
        return (descriptor, false, false)
    }

    deinit { if descriptor >= 0 { Glibc.close(descriptor) } }

    /// Writes `bytes` at the end.
    public func append(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var done = 0
            while done < raw.count {
                let written = isStream
                    ? write(descriptor, base + done, raw.count - done)
                    : pwrite(descriptor, base + done, raw.count - done, off_t(length) + off_t(done))
                if written < 0 {
                    if errno == EINTR { continue }
                    throw FileError("write to", path)
                }
                done += written
            }
        }
        length += Int64(bytes.count)
    }

    /// Writes `pieces` at the end, in order, as if joined: up to `gatheredPieces` of them per `pwritev` (`writev`
    /// into a stream), read where they are. The job writer hands over a batch's pages this way instead of first
    /// copying them into one buffer (that copy, with the buffer's growth, was a tenth of its CPU).
    ///
    /// ```swift
    /// try out.append(gathering: [Array("{\"id\":1}\n".utf8), Array("{\"id\":2}\n".utf8)])
    /// ```
    public func append(gathering pieces: [[UInt8]]) throws {
        var start = pieces.startIndex
        while start < pieces.endIndex {
            let end = Swift.min(pieces.endIndex, start + Self.gatheredPieces)
            var vectors: [iovec] = []
            vectors.reserveCapacity(end - start)
            try Self.withVectors(pieces[start..<end], into: &vectors) { try writeAll($0) }
            start = end
        }
    }

    /// Pieces per gathered write: below the system's `IOV_MAX` (1,024), and few enough that the nested pointer
    /// scopes of `withVectors` stay shallow.
    static let gatheredPieces = 64

    /// Calls `body` with an `iovec` per piece, each pointing into its array, valid for the call.
    private static func withVectors(
        _ pieces: ArraySlice<[UInt8]>, into vectors: inout [iovec], _ body: ([iovec]) throws -> Void
    ) throws {
        guard let first = pieces.first else { return try body(vectors) }
        try first.withUnsafeBytes { raw in
            if let base = raw.baseAddress, raw.count > 0 {
                vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: raw.count))
            }
            try withVectors(pieces.dropFirst(), into: &vectors, body)
        }
    }

    /// Writes every byte `vectors` point at, resuming after a short write.
    private func writeAll(_ vectors: [iovec]) throws {
        var vectors = vectors[...]
        while !vectors.isEmpty {
            let count = vectors.count  // at most `gatheredPieces`, below IOV_MAX
            let written = vectors.withUnsafeBufferPointer { buffer in
                isStream
                    ? writev(descriptor, buffer.baseAddress, Int32(count))
                    : pwritev(descriptor, buffer.baseAddress, Int32(count), off_t(length))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw FileError("write to", path)
            }
            length += Int64(written)
            // Drop the pieces written whole; a piece written in part goes on from where the write stopped.
            var left = written
            while let piece = vectors.first, left >= piece.iov_len {
                left -= piece.iov_len
                vectors = vectors.dropFirst()
            }
            if left > 0, var piece = vectors.first {
                piece.iov_base = piece.iov_base.map { $0 + left }
                piece.iov_len -= left
                vectors[vectors.startIndex] = piece
            }
        }
    }

    /// Appends the whole content of the file at `source`; returns the bytes copied.
    @discardableResult
    public func appendContents(ofFile source: String) throws -> Int64 {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw FileError("open", source) }
        defer { Glibc.close(input) }
        var copied: Int64 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError("read", source)
            }
            if count == 0 { return copied }
            if count == buffer.count {
                try append(buffer)
            } else {
                try append(Array(buffer[0..<count]))
            }
            copied += Int64(count)
        }
    }

    /// The owner, group and permission bits of `path` when it still names this file alone: a regular file, the
    /// one this writer opened (not replaced or moved since), with no other hard link. `nil` otherwise (a stream
    /// included), when replacing the file at `path` would not replace what the user named.
    public func soleOwnership() -> (owner: uid_t, group: gid_t, mode: mode_t)? {
        guard !isStream, descriptor >= 0 else { return nil }
        var opened = stat()
        var named = stat()
        guard fstat(descriptor, &opened) == 0, lstat(path, &named) == 0, named.st_mode & S_IFMT == S_IFREG,
            named.st_dev == opened.st_dev, named.st_ino == opened.st_ino, opened.st_nlink == 1
        else { return nil }
        return (opened.st_uid, opened.st_gid, opened.st_mode & 0o7777)
    }

    /// Flushes data and metadata to the disk (`fsync`).
    public func sync() throws {
        guard !isStream else { return }
        while fsync(descriptor) != 0 {
            if errno != EINTR { throw FileError("fsync", path) }
        }
    }

    /// Cuts the file back to `length` bytes.
    public func truncate(to length: Int64) throws {
        if isStream, length == self.length { return }
        guard ftruncate(descriptor, off_t(length)) == 0 else { throw FileError("truncate", path) }
        self.length = length
    }

    /// Closes the file; later calls fail.
    public func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}

/// Whole-file operations that survive a crash at any moment.
public enum DurableFiles {
    /// Replaces `path` with `bytes` atomically: a reader (or a restart after a crash) sees the old content or
    /// the new, never a mix. Writes a temporary file in the same directory, `fsync`s it, renames it over
    /// `path`, then `fsync`s the directory so the rename itself is durable.
    ///
    /// ```swift
    /// try DurableFiles.replace("state/checkpoint.json", with: Array(json.utf8))
    /// ```
    public static func replace(_ path: String, with bytes: [UInt8]) throws {
        let temporary = path + ".tmp-\(getpid())"
        // A stale temporary (a crash of an earlier process with this pid) goes; a link planted there is removed,
        // not written through, and the new file is created exclusively.
        unlink(temporary)
        let file = try DurableFile(path: temporary, truncatingTo: 0, syncingDirectory: false)
        guard file.created else {
            throw FileError("create", temporary, reason: "another process created it first")
        }
        try file.append(bytes)
        try file.sync()
        file.close()
        guard rename(temporary, path) == 0 else {
            let error = FileError("rename \(temporary) to", path)
            unlink(temporary)
            throw error
        }
        try syncDirectory(containing: path)
    }

    /// Moves `source` to `destination` (same file system) and makes the move durable.
    public static func move(_ source: String, to destination: String) throws {
        guard rename(source, destination) == 0 else { throw FileError("rename \(source) to", destination) }
        try syncDirectory(containing: destination)
    }

    /// `fsync`s the directory holding `path`, so entries created, renamed or removed in it are durable.
    public static func syncDirectory(containing path: String) throws {
        try syncDirectory(PathName.directory(containing: path))
    }

    /// `fsync`s `directory` itself.
    public static func syncDirectory(_ directory: String) throws {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileError("open directory", directory) }
        defer { close(descriptor) }
        while fsync(descriptor) != 0 {
            if errno != EINTR { throw FileError("fsync directory", directory) }
        }
    }

    /// The longest state file read (docs/security.md): a checkpoint, index or mark file trawl wrote is far
    /// smaller; one past this was not written by trawl and is refused before it is held in memory.
    public static let longestStateFile = 1 << 30

    /// Reads a whole (small) file, or `nil` when it does not exist; a file over `limit` bytes is an error (a file on
    /// disk is input too, and it is read whole).
    public static func read(_ path: String, limit: Int = longestStateFile) throws -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw FileError("read", path)
        }
        defer { Glibc.close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError("read", path)
            }
            guard bytes.count + count <= limit else {
                throw FileError("read", path, reason: "it is larger than \(limit) bytes, so trawl did not write it")
            }
            bytes.append(contentsOf: buffer[..<count])
        }
    }
}
