import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive advisory lock (`flock`) on a file, held until `release()` or until the process ends (the kernel
/// drops it then, so a crash never leaves a stale lock). The holder's pid is written into the file, so a second
/// process can say who holds it.
///
/// ```swift
/// let lock = try FileLock(path: "state/lock")   // throws FileLock.Held(pid: 4242) when another process has it
/// defer { lock.release() }
/// ```
public final class FileLock: @unchecked Sendable {
    /// Another process holds the lock.
    public struct Held: Error, Sendable {
        public var path: String
        /// The holder's pid, as it wrote it (nil when it had not yet).
        public var pid: Int32?
    }

    public let path: String
    private var descriptor: Int32

    /// Takes the lock without waiting. Throws `Held` when another process has it, `FileError` when the file
    /// cannot be opened (a symbolic link planted there is refused, not followed).
    public init(path: String) throws {
        self.path = path
        descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            if errno == ELOOP {
                throw FileError("open", path, reason: "it is a symbolic link, and trawl never writes through one")
            }
            throw FileError("open", path)
        }
        var retries = 0
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let code = errno
            let text = try? String(contentsOfFile: path, encoding: .utf8)
            let pid = text.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            // Held under this process's own pid: a lock just released may live on for a moment in a child being
            // spawned (it holds a copy of the descriptor until its exec closes it), so look again briefly.
            if code == EWOULDBLOCK, pid == getpid(), retries < 50 {
                retries += 1
                usleep(10_000)
                continue
            }
            Glibc.close(descriptor)
            descriptor = -1
            if code == EWOULDBLOCK { throw Held(path: path, pid: pid) }
            throw FileError("lock", path, errno: code)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    deinit { release() }

    /// Drops the lock (closing the file); later calls do nothing.
    public func release() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}
