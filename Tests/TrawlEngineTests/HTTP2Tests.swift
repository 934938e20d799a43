import Foundation
import Testing
@testable import TrawlEngine
import TrawlTestServer

/// nginx on loopback with TLS and HTTP/2 (ALPN), a throwaway certificate, and a fixed JSON reply.
private final class NginxTLSServer {
    let port: Int
    let certificatePath: String
    private let directory: URL
    private let process: ChildProcess

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-h2-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (certificate, keyPath) = try await makeTestCertificate(in: directory)
        certificatePath = certificate
        var started: (port: Int, process: ChildProcess)?
        for attempt in 0..<5 where started == nil {
            let port = 20_000 + Int.random(in: 0..<30_000) + attempt
            let config = """
                daemon off;
                worker_processes 1;
                pid \(directory.path)/nginx.pid;
                error_log \(directory.path)/error.log warn;
                events { worker_connections 256; }
                http {
                    access_log off;
                    client_body_temp_path \(directory.path); proxy_temp_path \(directory.path);
                    fastcgi_temp_path \(directory.path); uwsgi_temp_path \(directory.path);
                    scgi_temp_path \(directory.path);
                    server {
                        listen 127.0.0.1:\(port) ssl http2;
                        ssl_certificate \(certificatePath);
                        ssl_certificate_key \(keyPath);
                        location / { default_type application/json; return 200 '{"ok":true}'; }
                    }
                }
                """
            let configPath = directory.appendingPathComponent("nginx.conf").path
            try config.write(toFile: configPath, atomically: true, encoding: .utf8)
            let process = try ChildProcess("/usr/sbin/nginx", ["-c", configPath, "-p", directory.path])
            // Ready when it answers; gone when the port was taken.
            var probe = Client.Configuration()
            probe.tls = .insecureSkipVerification
            probe.logger.logLevel = .error
            let client = Client(configuration: probe)
            for _ in 0..<100 where process.isRunning {
                if (try? await client.send(Request(url: "https://127.0.0.1:\(port)/"))) != nil {
                    started = (port, process)
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            if started == nil, process.isRunning { process.terminate() }
        }
        guard let started else { throw ToolError.failed("nginx did not start") }
        port = started.port
        process = started.process
    }

    func stop() async {
        process.terminate()
        for _ in 0..<500 where process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        try? FileManager.default.removeItem(at: directory)
    }
}

@Suite("HTTP/2 over TLS", .serialized)
struct HTTP2Tests {
    @Test func http2IsNegotiatedAndMultiplexed() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"),
                "scripts/test installs nginx-light")
        let server = try await NginxTLSServer()
        var config = Client.Configuration()
        config.httpVersion = .http2
        config.tls.caFile = server.certificatePath
        let client = Client(configuration: config)
        let port = server.port
        let result = await Result {
            try await withThrowingTaskGroup(of: Response.self) { group in
                for index in 0..<20 {
                    group.addTask { try await client.send(Request(url: "https://localhost:\(port)/\(index)")) }
                }
                return try await group.reduce(into: [Response]()) { $0.append($1) }
            }
        }
        await server.stop()
        let responses = try result.get()
        #expect(responses.count == 20)
        #expect(responses.allSatisfy { $0.status == 200 && $0.httpVersion == .http2 })
        #expect(responses.allSatisfy { $0.bodyText == #"{"ok":true}"# })
        // PIPEWAIT: the requests share one connection instead of opening twenty.
        #expect(responses.filter { $0.timings.tls > .zero }.count <= 2)
    }

    @Test func http1IsTheDefaultOverTLS() async throws {
        let server = try await NginxTLSServer()
        var config = Client.Configuration()
        config.tls.caFile = server.certificatePath
        let client = Client(configuration: config)
        let result = await Result { try await client.send(Request(url: "https://localhost:\(server.port)/")) }
        await server.stop()
        #expect(try result.get().httpVersion == .http1_1)
    }
}
