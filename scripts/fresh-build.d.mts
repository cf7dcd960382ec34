/** The built standalone server (`dist/server.js`). */
export declare const BUILT_SERVER: string;
/** Builds the package unless dist/ is newer than its sources; answers the build's exit status (0 when none was needed). */
export declare function ensureBuilt(): number;
