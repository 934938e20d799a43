import Foundation
import Testing
import TrawlTestSupport

/// The house rule "C stays in its room": no public or open declaration of the library targets names an `Unsafe*`
/// pointer or a C type. Read from the sources, declaration by declaration (a signature may span lines up to `{`).
@Suite("public API: no Unsafe pointer, no C type", .hangGuard)
struct PublicSurfaceTests {
    static let targets = ["TrawlEngine", "TrawlJSON", "Trawl", "TrawlJobs", "TrawlBench"]
    static let forbidden = [
        "Unsafe", "OpaquePointer", "CURL", "curl_", "yajl_", "z_stream", "CCurl.", "CYajl.", "CZlib.",
    ]

    /// Public/open declarations of `text`, each with its signature up to the body's `{` (or the line's end).
    static func publicDeclarations(_ text: String) -> [(line: Int, signature: String)] {
        let lines = text.components(separatedBy: "\n")
        var found: [(Int, String)] = []
        for (index, line) in lines.enumerated() {
            let code = line.trimmingCharacters(in: .whitespaces)
            guard code.hasPrefix("public ") || code.hasPrefix("open ") || code.contains(" public func ")
                || code.hasPrefix("@inlinable public ")
            else { continue }
            var signature = code
            var next = index + 1
            while !signature.contains("{"), !signature.contains("="), next < lines.count, next < index + 8,
                signature.hasSuffix(",") || signature.hasSuffix("(")
            {
                signature += " " + lines[next].trimmingCharacters(in: .whitespaces)
                next += 1
            }
            if let body = signature.firstIndex(of: "{") { signature = String(signature[..<body]) }
            found.append((index + 1, signature))
        }
        return found
    }

    @Test("the declarations of the library targets")
    func noUnsafeOrCTypeInPublicAPI() throws {
        var offenders: [String] = []
        var scanned = 0
        for target in Self.targets {
            let directory = repositoryRoot.appendingPathComponent("Sources/\(target)")
            let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
            while let url = files?.nextObject() as? URL {
                guard url.pathExtension == "swift" else { continue }
                let text = try String(contentsOf: url, encoding: .utf8)
                for (line, signature) in Self.publicDeclarations(text) {
                    scanned += 1
                    if let word = Self.forbidden.first(where: { signature.contains($0) }) {
                        offenders.append("Sources/\(target)/\(url.lastPathComponent):\(line) (\(word)): \(signature)")
                    }
                }
            }
        }
        #expect(scanned > 300, "the scan found the sources")
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }

    @Test("the scan sees a signature that spans lines")
    func scannerReadsMultilineSignatures() {
        let text = """
            public struct A {
                public mutating func update(
                    _ bytes: UnsafeRawBufferPointer
                ) {}
                func hidden(_ p: UnsafeRawPointer) {}
            }
            """
        let declarations = Self.publicDeclarations(text)
        #expect(declarations.count == 2)
        #expect(declarations.contains { $0.signature.contains("UnsafeRawBufferPointer") })
        #expect(!declarations.contains { $0.signature.contains("UnsafeRawPointer") })
    }
}
