/// Heads that libcurl 7.88 accepts but whose body would be silently wrong: checked when the head ends, before any
/// of the body is delivered.
enum HeadCheck {
    struct Problem {
        var message: String
        var hint: String
    }

    static func problem(status: Int, headers: HeaderLines, followsRedirects: Bool) -> Problem? {
        // A redirect to nowhere: libcurl finds no URL to follow and the 3xx would end as an empty success.
        if followsRedirects, RedirectStep.isFollowable(status), !headers.hasLocation, headers.hasEmptyLocation {
            return Problem(
                message: "the redirect (\(status)) has an empty Location",
                hint: "the server did not say where to go; report it to the server's owner")
        }
        // Trawl never asks to switch protocols (no Upgrade header, no h2c): what follows a 101 is not HTTP, and
        // libcurl would hand it over as the body.
        if status == 101 {
            return Problem(
                message: "the server switched protocols (101) without being asked",
                hint: "the response is not HTTP from here on; check the URL and any proxy in between")
        }
        if let problem = headers.contentLengthProblem {
            return Problem(
                message: problem, hint: "the body's length cannot be trusted; nothing of the body was delivered")
        }
        return nil
    }
}
