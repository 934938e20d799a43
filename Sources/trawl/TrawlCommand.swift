import ArgumentParser
import Foundation

/// The `trawl` command line: bulk-fetch paginated JSON APIs, stream large responses, measure throughput.
@main
struct TrawlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trawl",
        abstract: "Bulk-fetch paginated JSON APIs, stream large responses, and measure throughput.",
        subcommands: [
            Demo.self,
            Fetch.self,
            Get.self,
            Extract.self,
            Bench.self,
            Serve.self,
        ]
    )

    /// Exit status contract: 0 success, 1 the work failed (message on stderr), 2 bad usage; bench adds 3 (a
    /// threshold failed) and 130 (stopped by Ctrl-C).
    static func main() async {
        do {
            var command = try parseAsRoot()
            do {
                if var asyncCommand = command as? AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            } catch let error as ValidationError {
                // Thrown by run(), after parsing: ArgumentParser would show the root's usage, not the command's.
                throw RunUsageError(error, command: type(of: command))
            }
        } catch let failure as CLIFailure {
            FileHandle.standardError.write(Data((TerminalText.safe(failure.description) + "\n").utf8))
            Foundation.exit(1)
        } catch let exit as ExitCode {
            // An exit status chosen by the command (bench: 3 for a failed threshold, 130 after Ctrl-C).
            Foundation.exit(exit == .validationFailure ? 2 : exit.rawValue)
        } catch let usage as RunUsageError {
            FileHandle.standardError.write(Data(TerminalText.safe(usage.text).utf8))
            Foundation.exit(2)
        } catch {
            let code = exitCode(for: error)
            guard code != .success else { exit(withError: error) }
            FileHandle.standardError.write(Data((TerminalText.safe(fullMessage(for: error)) + "\n").utf8))
            Foundation.exit(code == .validationFailure ? 2 : 1)
        }
    }
}
