import Foundation
import Testing
import TrawlTestServer
import TrawlTestSupport

@testable import TrawlEngine

@Suite("Repeated header lines, loopback, owner-only files", .hangGuard)
struct HostileFieldsTests {
    @Test("repeated header lines read as one field value (RFC 9110 §5.3); Set-Cookie stays its first line")
    func repeatedLinesCombine() async throws {
        var built = HTTPHeaders([("Cache-Control", "max-age=600"), ("X-A", "1"), ("cache-control", "no-store")])
        #expect(built["Cache-Control"] == "max-age=600, no-store")
        #expect(built["x-a"] == "1")
        built.add("Set-Cookie", "a=1")
        built.add("Set-Cookie", "b=2")
        #expect(built["set-cookie"] == "a=1")
        let head = CannedServer.response(
            "HTTP/1.1 200 OK",
            ["Content-Length: 2", "Cache-Control: max-age=600", "ETag: \"v1\"", "Cache-Control: no-store"],
            body: Array("{}".utf8))
        try await CannedServer.with(["/two": head]) { server in
            let response = try await Client().send(Request(url: server.url("/two")))
            #expect(response.headers["cache-control"] == "max-age=600, no-store")
            #expect(response.headers["ETag"] == "\"v1\"")
            #expect(response.headers.values(for: "Cache-Control") == ["max-age=600", "no-store"])
        }
    }

    @Test("loopback is an IP literal in 127.0.0.0/8 or ::1, or localhost; never a name starting with 127.")
    func loopbackIsALiteral() {
        for host in ["127.0.0.1", "127.255.3.4", "[::1]", "::1", "0:0:0:0:0:0:0:1", "localhost", "LOCALHOST"] {
            #expect(Loopback.isLoopback(host), "\(host)")
        }
        for host in [
            "127.0.0.1.nip.example", "127.attacker.example", "127.1", "localhost.example", "128.0.0.1", "[::2]",
            "::ffff:127.0.0.1", "", "127.0.0.1:80", "0x7f.0.0.1",
        ] {
            #expect(!Loopback.isLoopback(host), "\(host)")
        }
    }

    @Test("ownerOnly creates the file 0600 whatever it holds")
    func ownerOnlyFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-mode-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try DurableFile(path: directory + "/private", ownerOnly: true)
        try file.append([1, 2, 3])
        file.close()
        let mode = try FileManager.default.attributesOfItem(atPath: directory + "/private")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test("a state file is read whole only up to its limit; a missing one is nil")
    func stateFilesAreReadBounded() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-read-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(repeating: 0x41, count: 11).write(to: URL(fileURLWithPath: directory + "/eleven"))
        #expect(try DurableFiles.read(directory + "/eleven", limit: 11) == [UInt8](repeating: 0x41, count: 11))
        #expect(throws: FileError.self) { try DurableFiles.read(directory + "/eleven", limit: 10) }
        #expect(try DurableFiles.read(directory + "/absent") == nil)
        #expect(throws: FileError.self) { try DurableFiles.read(directory) }
    }
}
