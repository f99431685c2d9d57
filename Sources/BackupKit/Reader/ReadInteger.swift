/// How to show an integer the reader gave, in a message: the reader saturates numbers beyond
/// `Int` (`1e400` reads as `Int.max`), and printing that as 9223372036854775807 would quote
/// the file wrongly.
public enum ReadInteger {
    public static func shown(_ value: Int) -> String {
        switch value {
        case .max: "\(value) or more"
        case .min: "\(value) or less"
        default: "\(value)"
        }
    }
}
