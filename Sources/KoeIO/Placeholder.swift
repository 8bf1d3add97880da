public enum KoeIOPlaceholder {}
