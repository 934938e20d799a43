import Foundation
import Logging
import Synchronization
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

private final class LogBox: Sendable {
    let messages = Mutex<[(Logger.Level, String)]>([])
}

/// Keeps every message logged through it.
private struct CapturingLogHandler: LogHandler {
    let box: LogBox
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    init(into box: LogBox) { self.box = box }

    func log(event: LogEvent) {
        box.messages.withLock { $0.append((event.level, "\(event.message)")) }
    }
}

/// A TLS server on loopback: `openssl s_server -www` with a throwaway self-signed certificate for
/// localhost and 127.0.0.1.
private final class TLSServer {
    let port: Int
    let certificatePath: String
    private let process: ChildProcess
    private let directory: URL

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-tls-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (certificate, keyPath) = try await makeTestCertificate(in: directory)
        certificatePath = certificate
        let logPath = directory.appendingPathComponent("server.log").path
        #expect(FileManager.default.createFile(atPath: logPath, contents: nil))
        process = try ChildProcess(
            "/usr/bin/openssl", ["s_server", "-accept", "127.0.0.1:0", "-cert", certificatePath, "-key", keyPath, "-www"],
            stdout: logPath)
        var found: Int?
        for _ in 0..<200 where found == nil {
            try await Task.sleep(for: .milliseconds(20))
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let line = log.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT") }),
               let portText = line.split(separator: ":").last {
                found = Int(portText.trimmingCharacters(in: .whitespaces))
            }
        }
        guard let found else {
            process.terminate()
            throw TLSServerError.didNotStart
        }
        port = found
    }

    func stop() async {
        process.terminate()
        await Self.waitForExit(process)
        try? FileManager.default.removeItem(at: directory)
    }

    private static func waitForExit(_ process: ChildProcess) async {
        for _ in 0..<500 where process.isRunning {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    enum TLSServerError: Error { case didNotStart }
}

@Suite("TLS verification", .serialized, .endToEnd)
struct TLSTests {
    @Test func verificationIsOnByDefault() async throws {
        let server = try await TLSServer()
        let error = await expectTrawlError(.tlsFailed) {
            _ = try await Client().send(Request(url: "https://127.0.0.1:\(server.port)/"))
        }
        await server.stop()
        #expect(error?.curlCode == 60)  // CURLE_PEER_FAILED_VERIFICATION
    }

    @Test func trustedCertificateVerifies() async throws {
        let server = try await TLSServer()
        var config = Client.Configuration()
        config.tls.caFile = server.certificatePath
        let client = Client(configuration: config)
        let result = await Result { try await client.send(Request(url: "https://localhost:\(server.port)/")) }
        await server.stop()
        let response = try result.get()
        #expect(response.status == 200)
        #expect(response.timings.tls > .zero)
    }

    @Test func explicitOptOutSkipsVerification() async throws {
        let server = try await TLSServer()
        let logged = LogBox()
        var config = Client.Configuration()
        config.tls = .insecureSkipVerification
        config.logger = Logger(label: "test") { _ in CapturingLogHandler(into: logged) }
        let client = Client(configuration: config)
        let result = await Result { try await client.send(Request(url: "https://127.0.0.1:\(server.port)/")) }
        await server.stop()
        let response = try result.get()
        #expect(response.status == 200)
        let warnings = logged.messages.withLock { $0.filter { $0.0 == .warning }.map(\.1) }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("TLS certificate verification is OFF") == true)
    }
}

extension Result where Failure == any Error {
    init(_ body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
