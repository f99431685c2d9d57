/// The pages the loopback listener shows the browser, one per outcome of a login.
///
/// Each page is small and whole: a `<title>` naming the outcome (so a tab among many says
/// what happened), a heading, and the next step, in the terminal or the browser. The pages
/// carry no external resource (the listener serves nothing else) and nothing secret: the
/// code, state, verifier and tokens never reach a page, and the only text that is not fixed
/// (Google's error name) is HTML-escaped.
public enum LoginPage: Sendable, Equatable {
    case success
    /// The user pressed "Cancel" on Google's consent page (`error=access_denied`).
    case denied
    /// The grant lacks the Drive app-folder scope: its box was left unticked.
    case driveNotTicked
    /// A redirect whose `state` is not this login's (an old tab, a forged link).
    case stateMismatch
    /// The code exchange, or the authorization itself (`error` names Google's error when the
    /// redirect carried one), did not give a login.
    case failed(error: String?)
    /// A bare `/`: someone opened the listener's address by hand.
    case listener
    /// A request after the login ended that is not for its outcome page.
    case finished
    case notFound
    case badRequest
    case tooLarge

    public var title: String {
        switch self {
        case .success: "Logged in – cloudbackup"
        case .denied: "Access not granted – cloudbackup"
        case .driveNotTicked: "Drive access not ticked – cloudbackup"
        case .stateMismatch: "Not this login – cloudbackup"
        case .failed: "Login failed – cloudbackup"
        case .listener: "Login listener – cloudbackup"
        case .finished: "Login finished – cloudbackup"
        case .notFound: "Not found – cloudbackup"
        case .badRequest: "Bad request – cloudbackup"
        case .tooLarge: "Request too large – cloudbackup"
        }
    }

    var heading: String {
        switch self {
        case .success: "cloudbackup is logged in"
        case .denied: "Access was not granted"
        case .driveNotTicked: "Google Drive access was not ticked"
        case .stateMismatch: "This answer belongs to another login"
        case .failed: "The login did not succeed"
        case .listener: "This is cloudbackup's login listener"
        case .finished: "The login has finished"
        case .notFound: "Not found"
        case .badRequest: "Not a request cloudbackup understands"
        case .tooLarge: "The request is too large"
        }
    }

    /// What to do next, one paragraph each.
    var steps: [String] {
        switch self {
        case .success:
            ["You can close this tab and return to the terminal."]
        case .denied:
            [
                "cloudbackup is not logged in, so it cannot back up to your Google Drive.",
                "You can close this tab. To try again, run cloudbackup login in the terminal and press Continue on Google's page.",
            ]
        case .driveNotTicked:
            [
                "Google's page has a box for cloudbackup's own folder in your Google Drive; it was left unticked, so cloudbackup is not logged in.",
                "Run cloudbackup login again in the terminal and tick that box before you press Continue.",
            ]
        case .stateMismatch:
            [
                "This page was opened from an old or foreign link, so it was not used.",
                "Open the URL the terminal printed for the login that is waiting, or run cloudbackup login again.",
            ]
        case .failed(let error):
            (error.map { ["Google answered: \($0)."] } ?? [])
                + [
                    "The terminal says why. You can close this tab and run cloudbackup login again."
                ]
        case .listener:
            [
                "It waits for Google to send the browser back after you log in. Open the URL the terminal printed to log in."
            ]
        case .finished:
            ["See the terminal for how it went. You can close this tab."]
        case .notFound:
            ["cloudbackup's login listener has no such page."]
        case .badRequest:
            ["cloudbackup's login listener only answers the browser's return from Google."]
        case .tooLarge:
            ["cloudbackup's login listener does not read requests this large."]
        }
    }

    /// The whole document. Narrow screens get the full width (the viewport line); wide ones
    /// a column short enough to read.
    public var html: String {
        let paragraphs = steps.map { "<p>\(Self.escaped($0))</p>" }.joined()
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1">\
            <title>\(Self.escaped(title))</title><style>\
            body{font-family:system-ui,sans-serif;max-width:34em;margin:2em auto;padding:0 1em;\
            line-height:1.5;color:#222}h1{font-size:1.4em}</style></head>\
            <body><h1>\(Self.escaped(heading))</h1>\(paragraphs)</body></html>

            """
    }

    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
