import Foundation
import Testing
import TrawlTestSupport

@testable import TrawlEngine

#if canImport(Glibc)
    import Glibc
#endif

@Suite("DurableFile and FileLock: no writes through links, pipes in place, one holder", .hangGuard)
struct FileSafetyTests {
    func directory() throws -> String {
        let path = NSTemporaryDirectory() + "trawl-safety-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("a link planted at the path is refused by name (also a dangling one); its target is untouched")
    func linksAreRefused() throws {
        let root = try directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try Data("precious".utf8).write(to: URL(fileURLWithPath: root + "/victim"))
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: root + "/victim")
        try FileManager.default.createSymbolicLink(atPath: root + "/dangling", withDestinationPath: root + "/nowhere")
        for name in ["link", "dangling"] {
            for stream in [false, true] {
                #expect(throws: FileError.self) {
                    _ = try DurableFile(path: root + "/" + name, truncatingTo: 0, allowingStream: stream)
                }
                do {
                    _ = try DurableFile(path: root + "/" + name, allowingStream: stream)
                } catch let error as FileError {
                    #expect(error.description.contains("\(root)/\(name): it is a symbolic link"), "\(error)")
                }
            }
        }
        // A hard link is refused too: truncating it would truncate the victim.
        try FileManager.default.linkItem(atPath: root + "/victim", toPath: root + "/hard")
        do {
            _ = try DurableFile(path: root + "/hard", truncatingTo: 0)
            Issue.record("a hard link was opened")
        } catch let error as FileError {
            #expect(error.description.contains("\(root)/hard: it has 2 hard links"), "\(error)")
        }
        #expect(FileManager.default.contents(atPath: root + "/victim") == Data("precious".utf8))
        #expect(!FileManager.default.fileExists(atPath: root + "/nowhere"))
        // The atomic replace removes a link planted at its temporary name instead of writing through it.
        let checkpoint = root + "/checkpoint.json"
        try FileManager.default.createSymbolicLink(
            atPath: checkpoint + ".tmp-\(getpid())", withDestinationPath: root + "/victim")
        try DurableFiles.replace(checkpoint, with: Array("{}".utf8))
        #expect(FileManager.default.contents(atPath: root + "/victim") == Data("precious".utf8))
        #expect(FileManager.default.contents(atPath: checkpoint) == Data("{}".utf8))
    }

    @Test("a FIFO is refused as a file, and written in order as a stream when allowed (not truncated, not synced)")
    func fifoAsStream() throws {
        let root = try directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/pipe"
        try #require(mkfifo(path, 0o600) == 0)
        let reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        try #require(reader >= 0)
        defer { close(reader) }
        #expect(throws: FileError.self) { _ = try DurableFile(path: path) }
        let stream = try DurableFile(path: path, truncatingTo: 0, allowingStream: true)
        #expect(stream.isStream && !stream.created)
        try stream.append(Array("one\n".utf8))
        try stream.append(Array("two\n".utf8))
        try stream.sync()
        stream.close()
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
        #expect(count == 8 && Array(buffer[0..<8]) == Array("one\ntwo\n".utf8))
        // Bytes already written into a pipe cannot be cut back to a checkpoint.
        #expect(throws: FileError.self) { _ = try DurableFile(path: path, truncatingTo: 4, allowingStream: true) }
    }

    @Test("a second lock on a held file says the holder's pid; releasing frees it")
    func lockHeld() async throws {
        let root = try directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let lock = try FileLock(path: root + "/lock")
        // flock locks belong to the open file description: a second open in this process conflicts too.
        do {
            _ = try FileLock(path: root + "/lock")
            Issue.record("the second lock was granted")
        } catch let held as FileLock.Held {
            #expect(held.pid == getpid())
        }
        lock.release()
        // Retried briefly: a child another test spawns at this moment holds a copy of the descriptor (and so the
        // lock) until its exec closes it (O_CLOEXEC).
        var again: FileLock?
        for _ in 0..<100 where again == nil {
            again = try? FileLock(path: root + "/lock")
            if again == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(again != nil, "the lock was not free after its release")
        again?.release()
    }
}
