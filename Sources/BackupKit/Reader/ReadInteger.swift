/// How to show an integer the reader gave, in a message: the reader saturates numbers beyond
/// `Int` (`1e400` reads as `Int.max`), and printing that as 9223372036854775807 would quote
/// the file wrongly.
public enum ReadInteger {
    /// `value` in decimal, with "or more" / "or less" at `Int.max` / `Int.min`, where the file
    /// may have held any larger number.
    public static func shown(_ value: Int) -> String {
        switch value {
        case .max: "\(value) or more"
        case .min: "\(value) or less"
        default: "\(value)"
        }
    }
}
