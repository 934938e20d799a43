import Foundation
import Testing
import TrawlTestSupport

@testable import TrawlEngine

@Suite("DurableFile: appends, truncation to a checkpoint, creation", .hangGuard)
struct DurableFileTests {
    func directory() throws -> String {
        let path = NSTemporaryDirectory() + "trawl-durable-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("a new file says it was created (its directory is synced then); reopening does not")
    func creation() throws {
        let root = try directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/segment.jsonl"
        let file = try DurableFile(path: path, truncatingTo: 0)
        #expect(file.created)
        try file.append(Array("{\"id\":1}\n".utf8))
        try file.sync()
        file.close()
        let again = try DurableFile(path: path)
        #expect(!again.created)
        #expect(again.length == 9)
        again.close()
        let unsynced = try DurableFile(path: root + "/other", syncingDirectory: false)
        #expect(unsynced.created)
        unsynced.close()
    }

    @Test("reopening cuts the file back to the checkpointed length; a shorter file is an error")
    func truncation() throws {
        let root = try directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/out.jsonl"
        try Data("line 1\nline 2\ntorn".utf8).write(to: URL(fileURLWithPath: path))
        let file = try DurableFile(path: path, truncatingTo: 14)
        #expect(file.length == 14)
        try file.append(Array("line 3\n".utf8))
        file.close()
        #expect(FileManager.default.contents(atPath: path) == Data("line 1\nline 2\nline 3\n".utf8))
        #expect(throws: FileError.self) { try DurableFile(path: path, truncatingTo: 100) }
        #expect(throws: FileError.self) { try DurableFile(path: root + "/missing/out.jsonl") }
    }

    @Test("a gathered append writes its pieces in order, as if joined, over several system calls")
    func gatheredAppend() throws {
        let root = try directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/segment.jsonl"
        // More pieces than one `pwritev` takes, empty ones among them, and one of 3 MB.
        var pieces: [[UInt8]] = (0..<(2 * DurableFile.gatheredPieces + 7)).map { index in
            index % 10 == 3 ? [] : Array("{\"id\":\(index)}\n".utf8)
        }
        pieces.insert((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }, at: 40)
        let file = try DurableFile(path: path, truncatingTo: 0)
        try file.append(Array("head\n".utf8))
        try file.append(gathering: pieces)
        try file.append(gathering: [])
        let joined = Array("head\n".utf8) + pieces.flatMap { $0 }
        #expect(file.length == Int64(joined.count))
        try file.append(Array("tail\n".utf8))
        file.close()
        #expect(FileManager.default.contents(atPath: path) == Data(joined + Array("tail\n".utf8)))
        let stream = try DurableFile(path: "/dev/null", allowingStream: true)
        #expect(stream.isStream)
        try stream.append(gathering: pieces)
        #expect(stream.length == Int64(joined.count - 5))
        stream.close()
    }

    @Test("appending another file's contents copies it all; replace swaps content atomically")
    func appendAndReplace() throws {
        let root = try directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let source = root + "/segment"
        let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(bytes).write(to: URL(fileURLWithPath: source))
        let out = try DurableFile(path: root + "/out", truncatingTo: 0)
        try out.append([1, 2, 3])
        #expect(try out.appendContents(ofFile: source) == Int64(bytes.count))
        #expect(out.length == Int64(bytes.count + 3))
        out.close()
        let written = [UInt8](FileManager.default.contents(atPath: root + "/out") ?? Data())
        #expect(firstDifference(written, [1, 2, 3] + bytes) == nil)

        let checkpoint = root + "/checkpoint.json"
        try DurableFiles.replace(checkpoint, with: Array("{\"v\":1}".utf8))
        // A temporary file left by a crash is reused, not an error.
        try Data("stale".utf8).write(to: URL(fileURLWithPath: checkpoint + ".tmp-\(getpid())"))
        try DurableFiles.replace(checkpoint, with: Array("{\"v\":2}".utf8))
        #expect(try DurableFiles.read(checkpoint) == Array("{\"v\":2}".utf8))
        let names = try FileManager.default.contentsOfDirectory(atPath: root).sorted()
        #expect(names == ["checkpoint.json", "out", "segment"], "no temporary file is left")
    }
}
