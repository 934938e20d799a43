import Foundation
import TrawlEngine

extension JobRunner {
    /// Refuses a `cache:` directory that could not be made, naming it.
    func checkCache() throws {
        guard let directory = settings.cache, cache == nil else { return }
        throw JobError.state(
            "cannot use the cache directory \(directory)",
            hint: "give --cache (or cache:) a directory trawl can create")
    }
}
