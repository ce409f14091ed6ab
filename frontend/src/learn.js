// Entry point of the learning pages' browser code.
export {};
