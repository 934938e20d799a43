import Foundation
import Trawl
import TrawlEngine

extension JobRunner {
    /// The two halves of a parallel window whose walk reached `split.max_pages` with pages left: the window is
    /// discarded (its pages are read again by the halves) and each half walked as a unit of its own. A window of
    /// 1 second (1 for integers), or bisected as often as its id can say, fails instead, naming it.
    func bisect(_ unit: WorkUnit, _ split: IncrementalWindow.SplitPlace, pages: Int) throws(PaginationError)
        -> [WorkUnit]
    {
        let problem: WindowSplit.Problem
        if split.path.depth < WindowPath.maxDepth {
            do {
                let (low, high) = try WindowSplit.bisect(split.bounds)
                let halves = [
                    windowUnit(unit, bounds: low, index: split.index, path: split.path.lower),
                    windowUnit(unit, bounds: high, index: split.index, path: split.path.upper),
                ].compactMap { $0 }
                if halves.count == 2 { return halves }
                problem = WindowSplit.Problem(message: "the window \(split.bounds) cannot be split", hint: "")
            } catch {
                problem = error
            }
        } else {
            problem = WindowSplit.Problem(
                message: "the window \(split.bounds) holds more than the page limit after \(split.path.depth) "
                    + "bisections", hint: "raise split.max_pages")
        }
        let underlying = TrawlError(
            code: .invalidBody,
            message: "\(problem.message) (\(pages) pages read, split.max_pages is \(split.maxPages))",
            hint: problem.hint, method: unit.request.method.rawValue, url: redact(unit.request.url))
        var error = PaginationError(
            position: .number(pages), index: pages, url: redact(unit.request.url), underlying: underlying)
        error.kind = .pagination
        throw error
    }
}
