/** The version of this package, as in package.json (a test checks they agree). */
export declare const VERSION = "0.1.0";
