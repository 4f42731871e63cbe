// What the posting jobs need from each document module: the contract lives beside the connectors
// (server/connectors/subjects.ts), where the manifests that declare subjects and listeners read it too; the document
// modules' posting.ts files import it from here.
export type {
  AccountingCall,
  AccountingOutcome,
  FiscalAnswer,
  FiscalBlock,
  FiscalCall,
  PostedDocument,
  PostedRefs,
  PostingBlock,
  PostingDeclarations,
  PostingListener,
  PostingSubject,
  Prepared,
} from '../../connectors/subjects.js';
export { answerOfApplication } from '../../connectors/subjects.js';
