public enum KoeWorldVersion { public static let string = "0.1.0" }
