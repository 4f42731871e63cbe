// The one place where a unique violation (SQLSTATE 23505) becomes the caller's problem: each writer names the
// constraints a caller can violate and the problem each one means; any other error passes through unchanged.
import type { ApiError } from '../errors/api-error.js';

export type UniqueProblems = Record<string, () => ApiError>;

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const { code, constraint: violated } = (error ?? {}) as { code?: string; constraint?: string };
  return code === '23505' && (constraint === undefined || violated === constraint);
}

/** Rethrows a unique violation of one of `problems`' constraints as its problem, and any other error as it is. */
export function uniqueViolation(problems: UniqueProblems): (error: unknown) => never {
  return (error) => {
    const constraint = (error as { constraint?: string } | null)?.constraint;
    const problem = isUniqueViolation(error) && constraint ? problems[constraint] : undefined;
    throw problem ? problem() : error;
  };
}
