import ArgumentParser
import Foundation
import TrawlJobs

/// `trawl state show|set|reset`: reads and changes the high-water marks of incremental sources (JSON output).
struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Show, set or reset the marks of incremental sources in a --state directory (JSON output).",
        subcommands: [Show.self, Set.self, Reset.self])

    struct Location: ParsableArguments {
        @Option(help: "The state directory of the job (the one given to trawl fetch --state).")
        var state: String

        var store: MarkStore { MarkStore(stateDirectory: state) }

        func load() throws -> MarkStore.File {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: state, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CLIFailure("error: \(state) is not a state directory (trawl fetch --state \(state) makes one)")
            }
            return try wrapped { try store.load() }
        }

        func wrapped<T>(_ body: () throws -> T) throws -> T {
            do {
                return try body()
            } catch let failure as CLIFailure {
                throw failure
            } catch {
                throw CLIFailure("error: \(error)")
            }
        }
    }

    /// `{"mark":…,"run":…,"updated":…,"window_items":N}`.
    static func object(_ mark: MarkStore.SourceMark?) -> [String: Any] {
        [
            "mark": mark?.mark ?? NSNull(), "run": mark?.run ?? NSNull(), "updated": mark?.updated ?? NSNull(),
            "window_items": mark?.windowItems ?? 0,
        ]
    }

    /// Prints `object` as JSON with the layout's `version` (snake_case keys, as the report and bench JSON).
    static func print(_ object: [String: Any]) throws {
        var object = object
        object["version"] = 1
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
        Swift.print(String(decoding: data, as: UTF8.self))
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the marks (of one source when named): mark, run, updated, window_items.")
        @OptionGroup var location: Location
        @Argument(help: "A source name.") var source: String?

        func run() throws {
            let file = try location.load()
            if let source {
                try StateCommand.print(["source": source].merging(StateCommand.object(file.sources[source])) { $1 })
            } else {
                try StateCommand.print([
                    "run": file.run ?? NSNull(),
                    "sources": file.sources.mapValues { StateCommand.object($0) },
                ])
            }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a source's mark: the next run asks for items from VALUE (minus the lookback) on.")
        @OptionGroup var location: Location
        @Argument(help: "The source name.") var source: String
        @Argument(help: "The mark: an ISO-8601 date (2024-05-01T00:00:00Z) or an integer.") var value: String

        func validate() throws {
            guard IncrementalSpec(cursor: "c", param: "p", initial: value).isValidInitial else {
                throw ValidationError("'\(value)' is neither an ISO-8601 date nor an integer")
            }
        }

        func run() throws {
            _ = try location.load()
            var result: MarkStore.SourceMark?
            try location.wrapped {
                try location.store.update { file in
                    let mark = MarkStore.SourceMark(
                        mark: value, run: "set", updated: ISO8601DateFormatter().string(from: Date()))
                    file.sources[source] = mark
                    result = mark
                }
            }
            try StateCommand.print(["source": source].merging(StateCommand.object(result)) { $1 })
        }
    }

    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget the mark of SOURCE (of every source when none is named): the next run starts at initial.")
        @OptionGroup var location: Location
        @Argument(help: "A source name.") var source: String?

        func run() throws {
            _ = try location.load()
            var removed: [String] = []
            try location.wrapped {
                try location.store.update { file in
                    if let source {
                        if file.sources.removeValue(forKey: source) != nil { removed = [source] }
                    } else {
                        removed = file.sources.keys.sorted()
                        file.sources = [:]
                    }
                }
            }
            try StateCommand.print(["reset": removed])
        }
    }
}
