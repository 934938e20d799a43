// Built with the trait "Macros" only: `swift test --traits Macros` (.ci/run).
#if Macros
import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// What `@JSONFieldsDecodable` refuses, as the compiler reports it: the built macro plugin is loaded by `swiftc
/// -typecheck` over a file of cases, and each error must come at its line with its message (the macro cannot be
/// run in-process here: a test target that depends on a macro target is built for the host, and then cannot
/// import the `trawl` executable's module).
@Suite("@JSONFieldsDecodable refusals", .endToEnd)
struct MacroRefusalTests {
    static let cases = """
        import Foundation
        import TrawlMacros

        @propertyWrapper struct Clamped: Decodable {
            var wrappedValue: Int
        }

        @JSONFieldsDecodable
        final class AClass: Decodable {
            let id: Int
        }

        @JSONFieldsDecodable
        enum AnEnum: Decodable {
            case a
        }

        @JSONFieldsDecodable
        struct OwnInit: Decodable {
            let id: Int
            init(from decoder: any Decoder) throws { id = 1 }
        }

        @JSONFieldsDecodable
        struct Lazy: Decodable {
            lazy var id: Int = 1
        }

        @JSONFieldsDecodable
        struct Wrapped: Decodable {
            @Clamped var level: Int
        }

        @JSONFieldsDecodable
        struct Conditional: Decodable {
            #if DEBUG
            let trace: String
            #endif
        }

        @JSONFieldsDecodable
        struct Tuple: Decodable {
            let (a, b): (Int, Int)
        }

        """

    /// Forms that compile to the end (SIL: definite initialization is checked there, not in type checking).
    static let accepted = """
        import Foundation
        import TrawlMacros

        @JSONFieldsDecodable
        struct Fine: Decodable {
            @available(*, deprecated) let old: Int
            let id: Int
            let kind = "item"    // not read (it cannot be overwritten): assigning it would be an error
        }

        @MainActor
        @JSONFieldsDecodable
        struct OnMain: Decodable {    // the initializer is nonisolated, as init(from:) is
            let id: Int
            let name: String?
        }

        @JSONFieldsDecodable
        public struct Visible: Decodable {
            public let id: Int
            var count = 0, note: String?    // count has a value: it does not take note's optional type
        }
        """

    /// (line, message) for each refusal in `cases`.
    static let expected: [(Int, String)] = [
        (8, "@JSONFieldsDecodable applies to a struct; for a class or an enum, conform to JSONFieldsDecodable and write init(fields:)"),
        (13, "@JSONFieldsDecodable applies to a struct; for a class or an enum, conform to JSONFieldsDecodable and write init(fields:)"),
        (21, "@JSONFieldsDecodable would not read what this init(from:) reads; remove the attribute, or conform to JSONFieldsDecodable and write init(fields:)"),
        (26, "@JSONFieldsDecodable cannot decode a lazy property; make it a stored or computed property"),
        (31, "@JSONFieldsDecodable does not support property wrappers; conform to JSONFieldsDecodable and write init(fields:)"),
        (36, "@JSONFieldsDecodable cannot see which members an #if keeps; move them out of the #if, or write init(fields:)"),
        (43, "@JSONFieldsDecodable needs one name per stored property (no tuple patterns)"),
    ]

    /// Runs swiftc over `source` with the built macro plugin: its exit status and its diagnostics.
    func compile(_ source: String, _ mode: [String]) async throws -> (status: Int32, output: String) {
        let products = try #require(Bundle.main.executableURL).deletingLastPathComponent()
        let plugin = products.appendingPathComponent("TrawlMacrosPlugin-tool").path
        try #require(FileManager.default.isExecutableFile(atPath: plugin), "no macro plugin at \(plugin)")
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-macro-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("cases.swift").path
        try Data(source.utf8).write(to: URL(fileURLWithPath: file))
        let errors = directory.appendingPathComponent("errors.txt").path
        var arguments = mode + [file, "-I", products.appendingPathComponent("Modules").path]
        for shim in ["CCurl", "CYajl", "CZlib"] { arguments += ["-I", root.appendingPathComponent("CShims/\(shim)").path] }
        arguments += ["-load-plugin-executable", plugin + "#TrawlMacrosPlugin"]
        // The toolchain's swiftc: $SWIFTC, else the first on the PATH, else where this machine has it.
        let environment = ProcessInfo.processInfo.environment
        let onPath = (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/swiftc" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        let swiftc = environment["SWIFTC"] ?? onPath ?? "/opt/swift/usr/bin/swiftc"
        let child = try ChildProcess(swiftc, arguments, stderr: errors)
        let deadline = ContinuousClock.now + .seconds(100)
        while child.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        child.terminate(SIGKILL)
        return (child.exitStatus, (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }

    @Test("classes, enums, an own init(from:), lazy properties, property wrappers, #if members and tuple patterns are compile-time errors")
    func refusals() async throws {
        let (status, output) = try await compile(Self.cases, ["-typecheck"])
        #expect(status != 0, "swiftc accepted the cases: \(output)")
        // `cases.swift:LINE:COLUMN: error: MESSAGE`, one per refusal, and no other error.
        let reported = output.split(separator: "\n").compactMap { line -> (Int, String)? in
            let parts = line.split(separator: ":", maxSplits: 4, omittingEmptySubsequences: false)
            guard parts.count == 5, parts[0].hasSuffix("cases.swift"), parts[3] == " error", let number = Int(parts[1])
            else { return nil }
            var message = parts[4].trimmingCharacters(in: .whitespaces)
            if message.hasSuffix(" (from macro 'JSONFieldsDecodable')") {
                message.removeLast(" (from macro 'JSONFieldsDecodable')".count)
            }
            return (number, message)
        }
        #expect(reported.map(\.0) == Self.expected.map(\.0), "\(output)")
        #expect(reported.map(\.1) == Self.expected.map(\.1), "\(output)")
    }

    @Test("what it accepts compiles through SIL in Swift 6: a let with a value left alone, @MainActor and public structs")
    func accepted() async throws {
        let (status, output) = try await compile(Self.accepted, ["-swift-version", "6", "-emit-sil", "-o", "/dev/null"])
        #expect(status == 0, "\(output)")
        #expect(!output.contains("error:"), "\(output)")
    }
}
#endif
