import Foundation
import TrawlEngine
import TrawlTestServer

/// nginx on loopback with TLS and a throwaway certificate, for the tests that need a real TLS peer (HTTP/2 over
/// ALPN, a plain-HTTP request on a TLS port). `locations` is the rest of the `server { }` block for a port.
final class NginxTLSServer {
    let port: Int
    let certificatePath: String
    private let directory: URL
    private let process: ChildProcess

    /// - Parameter listen: the `listen` directive's options after the address, e.g. `ssl http2`.
    init(listen: String = "ssl", locations: (_ port: Int) -> String) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-nginx-\(UUID())")
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
                        listen 127.0.0.1:\(port) \(listen);
                        ssl_certificate \(certificatePath);
                        ssl_certificate_key \(keyPath);
                        \(locations(port))
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
                if (try? await client.send(Request(url: "https://127.0.0.1:\(port)/ready"))) != nil {
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
